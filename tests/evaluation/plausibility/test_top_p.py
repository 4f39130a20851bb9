"""Paper 002's top-p % binarization against a direct, loop-by-loop computation and hand-made cases."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.plausibility.top_p import (
    leave_one_out_regression,
    normalized,
    optimal_share,
    select_share,
    share_above,
    token_f1,
    top_p_binarize,
)


def direct_binarization(scores, humans):
    """The reference code's steps written out with plain loops (run_evaluations.py, non-legacy mode)."""
    docs = []
    for s in scores:
        s = np.asarray(s, dtype=float)
        if s.min() < 0 or s.max() > 1:  # baselines are min-max normalized, masks in [0, 1] are not
            s = (s - s.min()) / (s.max() - s.min())
        docs.append(s)
    xs, ys = [], []
    for s, h in zip(docs, humans):
        xs.append(sum(1 for v in s if v >= 0.1) / len(s))
        order = sorted(s, reverse=True)
        best, best_f1 = 0.0, 0.0
        for share in np.linspace(0.01, 0.99, 150):
            cut = order[min(int(np.round(share * len(s))), len(s) - 1)]
            chosen = [v >= cut for v in s]
            tp = sum(1 for c, g in zip(chosen, h) if c and g)
            fp = sum(1 for c, g in zip(chosen, h) if c and not g)
            fn = sum(1 for c, g in zip(chosen, h) if g and not c)
            p, r = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
            f1 = 2 * p * r / (p + r) if p + r else 0.0
            if f1 > best_f1:
                best, best_f1 = share, f1
        ys.append(best)
    out = []
    for d, s in enumerate(docs):
        num = sum(math.exp(-(xs[e] - xs[d]) ** 2 / 0.05) * ys[e] for e in range(len(docs)) if e != d)
        den = sum(math.exp(-(xs[e] - xs[d]) ** 2 / 0.05) for e in range(len(docs)) if e != d)
        share = num / den
        order = sorted(s, reverse=True)
        cut = order[min(int(np.round(share * len(s))), len(s) - 1)]
        out.append((share, np.array([v >= cut for v in s])))
    return xs, ys, out


def test_top_p_matches_direct_computation():
    rng = np.random.default_rng(3)
    scores, humans = [], []
    for d in range(12):
        n = int(rng.integers(8, 40))
        human = rng.random(n) < rng.uniform(0.1, 0.5)
        raw = rng.normal(size=n) + 1.5 * human
        scores.append(raw if d % 2 else 1 / (1 + np.exp(-raw)))  # signed scores and [0, 1] masks
        humans.append(human)
    result = top_p_binarize(scores, humans)
    xs, ys, expected = direct_binarization(scores, humans)
    np.testing.assert_allclose(result.feature, xs, rtol=0, atol=1e-12)
    np.testing.assert_allclose(result.optimal, ys, rtol=0, atol=1e-12)
    for d, (share, chosen) in enumerate(expected):
        assert result.predicted_share[d] == pytest.approx(share, rel=1e-12)
        np.testing.assert_array_equal(result.selected[d], chosen)
    assert 0 < np.mean([s.mean() for s in result.selected]) < 1  # not a degenerate all / nothing selection


def test_leave_one_out_excludes_the_document_itself():
    # two documents with the same feature and one far away: each of the twins is predicted by the other
    x, y = np.array([0.2, 0.2, 0.9]), np.array([0.1, 0.3, 0.8])
    predicted = leave_one_out_regression(x, y)
    far = math.exp(-(0.7 ** 2) / 0.05)
    assert predicted[0] == pytest.approx((0.3 + far * 0.8) / (1 + far))
    assert predicted[1] == pytest.approx((0.1 + far * 0.8) / (1 + far))
    assert predicted[2] == pytest.approx(0.2)  # both others weigh the same
    with pytest.raises(ValueError, match="at least two"):
        leave_one_out_regression([0.5], [0.5])


def test_selection_keeps_ties_and_f1_conventions():
    scores = np.array([0.9, 0.5, 0.5, 0.1, 0.0])
    np.testing.assert_array_equal(select_share(scores, 0.0), [1, 0, 0, 0, 0])
    np.testing.assert_array_equal(select_share(scores, 0.2), [1, 1, 1, 0, 0])  # rank 1 is a tie: both kept
    np.testing.assert_array_equal(select_share(scores, 0.99), [1, 1, 1, 1, 1])
    assert token_f1([1, 1, 0, 0, 0], [1, 0, 0, 0, 1]) == pytest.approx(0.5)
    assert token_f1([0, 0, 0, 0, 0], [1, 0, 0, 0, 0]) == 0.0
    assert share_above(scores) == pytest.approx(0.8)
    assert optimal_share(scores, [1, 0, 0, 0, 0]) == pytest.approx(0.01)  # the first share selecting only word 0
    assert optimal_share(scores, [0, 0, 0, 0, 0]) == 0.0


def test_normalization_auto_leaves_masks_and_rescales_scores():
    mask = np.array([0.2, 0.95, 0.0])
    np.testing.assert_array_equal(normalized(mask), mask)
    np.testing.assert_allclose(normalized(np.array([-2.0, 0.0, 2.0])), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(normalized(mask, "min-max"), [0.2 / 0.95, 1.0, 0.0])
    np.testing.assert_array_equal(normalized(np.array([3.0, 3.0]), "min-max"), [0.0, 0.0])
