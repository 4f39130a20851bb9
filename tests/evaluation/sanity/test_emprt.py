"""eMPRT (relative rise in explanation complexity between the original and the fully randomized model) against
scipy's entropy, on hand-made vectors and on a cascading randomization of the tiny keyword model."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import entropy

from evaluation.metric import METRICS
from evaluation.sanity import emprt
from evaluation.sanity.one_input import run_sanity


def rise_by_hand(before, after) -> float:
    h0 = entropy(np.abs(before) / np.abs(before).sum())
    h1 = entropy(np.abs(after) / np.abs(after).sum())
    return (h1 - h0) / h0


def test_relative_rise_equals_the_raw_entropy_ratio():
    before, after = np.array([3.0, -1.0, 0.5, 0.5]), np.array([1.0, 1.0, -1.0, 0.9])
    assert emprt.relative_complexity_rise(before, after) == pytest.approx(rise_by_hand(before, after), abs=1e-12)
    assert emprt.relative_complexity_rise(after, after) == 0.0
    assert math.isnan(emprt.relative_complexity_rise([0.0, 5.0, 0.0], after))  # one word: nothing to rise from
    assert METRICS["sanity_emprt"].higher_is_better and METRICS["sanity_emprt"].family == "sanity"


def test_emprt_of_a_cascading_randomization(keyword_classifier):
    encoding = keyword_classifier.encode("the film was excellent and fun")
    result = run_sanity(keyword_classifier, encoding, ["saliency", "random"], mode="cascading", cache=None,
                        chance_draws=10)
    values = emprt.emprt(result)
    for method in ("saliency", "random"):
        expected = rise_by_hand(result.stages[0].explanations[method].word_scores,
                                result.stages[-1].explanations[method].word_scores)
        assert values[method] == pytest.approx(expected, abs=1e-9)
    independent = run_sanity(keyword_classifier, encoding, ["saliency"], mode="independent", cache=None,
                             chance_draws=10)
    with pytest.raises(ValueError, match="cascading"):
        emprt.emprt(independent)


def test_the_random_band_is_the_rise_to_uniform_noise():
    original = np.array([3.0, -1.0, 0.5, 0.5, 0.1])
    draws = emprt.chance_rise(original, np.random.default_rng(3), 30)
    rng = np.random.default_rng(3)
    expected = [rise_by_hand(original, rng.uniform(-1.0, 1.0, 5)) for _ in range(30)]
    assert draws == pytest.approx(expected, abs=1e-12)
    band = emprt.band(draws)
    assert band["mean"] == pytest.approx(np.mean(expected)) and band["low"] <= band["mean"] <= band["high"]
    assert band["mean"] > 0  # noise is more complex than a map with one dominant word
    assert np.isnan(emprt.chance_rise([1.0], np.random.default_rng(0), 3)).all()
