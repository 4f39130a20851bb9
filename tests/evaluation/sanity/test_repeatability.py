"""Repeatability across seeds: a deterministic method gives exactly 1; LIME with few samples gives less, and the value
equals scipy's Spearman averaged over every pair of independently computed runs."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from evaluation.metric import METRICS
from evaluation.sanity import one_input, repeatability
from explainers import create

TEXT = "the film was excellent and the music fun , rather long"
SEEDS = (0, 1, 2, 3)


def test_a_deterministic_method_repeats_exactly(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    result = repeatability.run_repeatability(keyword_classifier, encoding, ["saliency", "leave_one_out"], seeds=SEEDS,
                                             target=1, cache=None, chance_draws=20)
    frame = result.frame().set_index("method")
    assert frame.loc["saliency", "spearman"] == 1.0 and frame.loc["saliency", "top_k"] == 1.0
    assert frame.loc["leave_one_out", "spearman"] == 1.0
    assert not frame.loc["saliency", "seeded"] and frame.loc["saliency", "seeds"] == len(SEEDS)
    assert result.chance["spearman"]["high"] < 1.0  # the random band sits below


def test_lime_with_few_samples_varies_and_matches_a_direct_computation(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    result = repeatability.run_repeatability(keyword_classifier, encoding, ["lime"], seeds=SEEDS, target=1, cache=None,
                                             chance_draws=20)
    # independently: LIME created with each seed, explained, and scipy's Spearman over the 6 pairs
    maps = [create("lime", seed=seed).explain(keyword_classifier, encoding, 1).word_scores for seed in SEEDS]
    rhos = [stats.spearmanr(a, b).statistic for a, b in itertools.combinations(maps, 2)]
    k = one_input.top_k_count(len(maps[0]))
    overlaps = [len(set(np.argsort(-np.abs(a), kind="stable")[:k]) & set(np.argsort(-np.abs(b), kind="stable")[:k])) / k
                for a, b in itertools.combinations(maps, 2)]
    row = result.frame().set_index("method").loc["lime"]
    assert row["spearman"] < 1.0 and row["seeded"]
    assert row["spearman"] == pytest.approx(np.mean(rhos), abs=1e-12)  # same seeds, same process: same maps
    assert row["top_k"] == pytest.approx(np.mean(overlaps), abs=1e-12)


def test_seeds_are_checked_and_the_metrics_registered(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    with pytest.raises(ValueError, match="two different seeds"):
        repeatability.run_repeatability(keyword_classifier, encoding, ["lime"], seeds=[3, 3], cache=None)
    assert repeatability.with_seed(create("lime"), 7).params.seed == 7
    assert repeatability.with_seed(create("saliency"), 7).params == create("saliency").params
    assert METRICS["sanity_repeatability"].family == "sanity" and METRICS["sanity_repeatability"].higher_is_better


def test_pairwise_by_hand():
    a = np.array([0.3, -0.1, 0.7, 0.05, 0.2])
    b = np.array([0.1, 0.4, 0.8, 0.0, -0.5])
    # the same ranking from other values (a cached copy, a rescaled map) is rho = 1 exactly
    assert repeatability.pairwise([a, a * 3 + 1e-3])["spearman"] == 1.0
    three = repeatability.pairwise([a, b, -a], top_fraction=0.4)
    rhos = [stats.spearmanr(a, b).statistic, stats.spearmanr(a, -a).statistic, stats.spearmanr(b, -a).statistic]
    assert three["spearman"] == pytest.approx(np.mean(rhos), abs=1e-12)
    # k = 2 by |score|: a -> {2, 0}, b -> {2, 4}, -a -> {2, 0}: overlaps 1/2, 1, 1/2
    assert three["top_k"] == pytest.approx((0.5 + 1.0 + 0.5) / 3)
