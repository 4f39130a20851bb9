"""ferret-xai's AOPC comprehensiveness / sufficiency preset against the definition worked by hand
(ferret 0.4 evaluators/faithfulness_measures.py: top int(p n) for p = 10..100 %, only scores > 0, a threshold
that repeats the previous rationale left out, comp 0 / suff 1 when none is left)."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.faithfulness.curves import evaluate_scores
from evaluation.faithfulness.presets import BY_ID, EVALUATOR_METRICS
from evaluation.faithfulness.random_band import methods_and_random
from explainers.scores import class_score
from models.perturb import perturbed_logits

TEXT = "the movie was excellent and the music was long"  # 9 words
COMP, SUFF = BY_ID["comprehensiveness-ferret"], BY_ID["sufficiency-ferret"]


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def test_points_keep_the_positive_words_and_drop_repeats():
    # 9 words, 3 scored > 0: int(p 9) = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 -> capped at 3 -> points 1, 2, 3
    counts, x = COMP.points_for(9, 9, 3)
    assert counts.tolist() == [1, 2, 3] and x.tolist() == [0.2, 0.3, 0.4]
    assert COMP.points_for(9, 9, 0)[0].tolist() == []
    assert COMP.points_for(9, 9, None)[0].tolist() == list(range(1, 10))  # random orderings: no cap


def by_hand(classifier, encoding, order, counts, mode, target):
    keep = np.ones((len(counts), encoding.n_words), dtype=bool)
    for row, c in enumerate(counts):
        top = order[:c]
        if mode == "remove":
            keep[row, top] = False
        else:
            keep[row] = False
            keep[row, top] = True
    p0 = class_score(classifier.logits_of(encoding)[None, :], target, "probability")[0]
    p = class_score(perturbed_logits(classifier, encoding, keep, "delete"), target, "probability")
    return float(np.mean(p0 - p))


def test_values_equal_the_definition_by_hand(smooth):
    encoding = smooth.encode(TEXT)
    scores = np.array([-0.2, 0.5, -0.1, 0.9, -0.3, 0.0, 0.2, -0.4, -0.5])  # positives: 3, 1, 6
    target = int(np.argmax(smooth.logits_of(encoding)))
    values = evaluate_scores(smooth, encoding, [COMP, SUFF], scores, {"target": target}).values
    order = np.array([3, 1, 6])
    assert values[COMP.id] == pytest.approx(by_hand(smooth, encoding, order, [1, 2, 3], "remove", target), abs=1e-6)
    assert values[SUFF.id] == pytest.approx(by_hand(smooth, encoding, order, [1, 2, 3], "keep", target), abs=1e-6)


def test_no_positive_score_gives_ferrets_defaults(smooth):
    encoding = smooth.encode(TEXT)
    values = evaluate_scores(smooth, encoding, [COMP, SUFF], -np.ones(encoding.n_words)).values
    assert values == {COMP.id: 0.0, SUFF.id: 1.0}


def test_dataset_path_caps_each_method_by_its_own_positives(smooth):
    encoding = smooth.encode(TEXT)
    few = np.array([0.0, 0.5, 0, 0.9, 0, 0, 0, 0, 0])
    many = np.arange(9, dtype=float) + 1
    per, _ = methods_and_random(smooth, encoding, [COMP, SUFF], {"few": few, "many": many}, {}, n=2)
    for name, scores in (("few", few), ("many", many)):
        alone = evaluate_scores(smooth, encoding, [COMP, SUFF], scores).values
        assert per[name].values == pytest.approx(alone, abs=1e-6)
    assert per["few"].curves[COMP.id].counts == [1, 2]


def test_the_ferret_evaluator_is_registered():
    assert EVALUATOR_METRICS["ferret"] == (COMP.id, SUFF.id)
