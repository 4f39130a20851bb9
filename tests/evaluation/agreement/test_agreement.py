"""Krishna et al.'s disagreement measures, Pearson, complexity and sparseness against hand-computed values (and
scipy where it applies)."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import entropy, pearsonr

from evaluation.agreement import measures as A
from explainers import Explanation

WORDS = ("a", "b", "c", "d", "e")
# |x| ranks 0 > 1 > 3 > 2 > 4; |y| ranks 1 > 0 > 3 > 2 > 4; word 3 has opposite signs
X = [0.9, -0.5, 0.1, 0.3, 0.0]
Y = [0.7, -0.8, -0.4, -0.6, 0.05]


def record(method_id, scores, words=WORDS):
    n = len(words)
    return Explanation(method_id=method_id, method_label=method_id.title(), family="perturbation", signed=True,
                       tokens=("[CLS]",) + tuple(words) + ("[SEP]",), token_word=(-1,) + tuple(range(n)) + (-1,),
                       words=tuple(words), word_segment=(0,) * n, word_scores=np.asarray(scores, dtype=float),
                       token_scores=None, target=1, target_label="positive", provenance={})


@pytest.mark.parametrize("measure, expected", [
    ("feature", 1.0),        # top-3 sets {0, 1, 3} and {1, 0, 3}
    ("rank", 1 / 3),         # only rank 3 holds the same word (3)
    ("sign", 2 / 3),         # words 0 and 1 agree in sign, word 3 does not
    ("signed-rank", 0.0),    # the one same-rank word (3) has opposite signs
    ("pairwise-rank", 0.9),  # of 10 pairs only (0, 1) is ordered differently
])
def test_krishna_measures_by_hand(measure, expected):
    matrix = A.agreement_matrix([record("one", X), record("two", Y)], measure, absolute=True, k=3).matrix
    assert matrix[0, 1] == pytest.approx(expected) and matrix[1, 0] == matrix[0, 1]
    assert matrix[0, 0] == 1.0


def test_signed_ranking_changes_the_top_k():
    # signed: x ranks 0 > 3 > 2 > 4 > 1; y ranks 0 > 4 > 2 > 3 > 1 -> top-2 {0, 3} vs {0, 4}
    matrix = A.agreement_matrix([record("one", X), record("two", Y)], "feature", absolute=False, k=2).matrix
    assert matrix[0, 1] == pytest.approx(0.5)


def test_pairwise_rank_agreement_counts_ties_as_their_own_order():
    a, b = np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    # pairs (0,1): tie vs less -> differ; (0,2) and (1,2): both less -> same
    assert A.pairwise_rank_agreement(a, b) == pytest.approx(2 / 3)


def test_k_is_capped_at_the_number_of_words():
    matrix = A.agreement_matrix([record("one", X), record("two", Y)], "feature", k=50).matrix
    assert matrix[0, 1] == 1.0


def test_pearson_equals_scipy():
    rng = np.random.default_rng(1)
    vectors = [rng.normal(size=9) for _ in range(4)]
    words = tuple(f"w{i}" for i in range(9))
    for absolute in (False, True):
        matrix = A.agreement_matrix([record(f"m{i}", v, words) for i, v in enumerate(vectors)], "pearson",
                                    absolute=absolute).matrix
        for i, j in itertools.combinations(range(4), 2):
            x, y = (np.abs(vectors[i]), np.abs(vectors[j])) if absolute else (vectors[i], vectors[j])
            assert matrix[i, j] == pytest.approx(pearsonr(x, y)[0], abs=1e-12)


def test_complexity_is_normalized_entropy():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=7)
    share = np.abs(scores) / np.abs(scores).sum()
    assert A.complexity(scores) == pytest.approx(entropy(share) / math.log(7), abs=1e-12)
    assert A.complexity([0.0, 2.0, 0.0]) == 0.0 and A.complexity([1, -1, 1, -1]) == pytest.approx(1.0)
    assert math.isnan(A.complexity([0.0, 0.0]))


def test_gini_by_hand_and_as_mean_absolute_difference():
    assert A.gini([0, 0, 0, 1]) == pytest.approx(0.75) and A.gini([2, -2, 2]) == pytest.approx(0.0)
    assert A.gini([1, 2, 3]) == pytest.approx(8 / 36)
    values = np.abs(np.random.default_rng(3).normal(size=11))
    mad = np.abs(values[:, None] - values[None, :]).sum() / (2 * len(values) ** 2 * values.mean())
    assert A.gini(values) == pytest.approx(mad, abs=1e-12)
    assert math.isnan(A.gini([0.0, 0.0]))


def test_top_k_share_of_importance():
    assert A.top_k_share([3, 1, 0, -1], k=1) == pytest.approx(0.6)
    assert A.top_k_share([3, 1, 0, -1], k=2) == pytest.approx(0.8)
    assert A.top_k_share([3, 1, 0, -1], k=9) == pytest.approx(1.0)


def test_report_has_every_measure_and_shape():
    report = A.agreement_report([record("one", X), record("two", Y)], k=3)
    assert set(report["agreement"]) == set(A.MEASURES)
    assert report["agreement"]["sign"][0]["Two"] == pytest.approx(2 / 3)
    shape = {row["method"]: row for row in report["shape"]}
    assert shape["One"]["gini"] == pytest.approx(A.gini(X)) and shape["Two"]["k"] == 3
    assert "not faithfulness" in report["caveat"]
