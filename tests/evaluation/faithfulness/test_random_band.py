"""The random baseline: batched orderings equal one-at-a-time evaluation, known expectations on the keyword
model, the band and the "not distinguishable from random" flag, and the dataset-level paired comparison."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tolerances import float32_tolerance

from evaluation.baselines import MIN_ORDERINGS, NOT_DISTINGUISHABLE, band, compare_with_random, orderings_seed
from evaluation.faithfulness.curves import RemovalOptions, evaluate_orders, evaluate_scores, random_orders
from evaluation.faithfulness.presets import BY_ID
from evaluation.faithfulness.random_band import random_baseline
from evaluation.metric import RANDOM_METHOD
from evaluation.summary import summarize

WORDS = "a film with excellent music and a very old plot".split()  # the keyword model is reliable at this length
KEY = WORDS.index("excellent")


@pytest.fixture(scope="module")
def enc(keyword_classifier):
    return keyword_classifier.encode(" ".join(WORDS))


def test_batched_orderings_equal_one_at_a_time(keyword_classifier, enc):
    metrics = [BY_ID["comprehensiveness-eraser"], BY_ID["sufficiency-eraser"], BY_ID["deletion-auc"]]
    baseline = random_baseline(keyword_classifier, enc, metrics, n=MIN_ORDERINGS)
    orders = random_orders(enc.n_words, MIN_ORDERINGS, baseline.seed)
    for i, order in enumerate(orders):
        alone = evaluate_orders(keyword_classifier, enc, metrics, order[None, :])[0]
        for metric in metrics:
            assert baseline.values[metric.id][i] == pytest.approx(alone.values[metric.id], abs=float32_tolerance(1.0))
    assert len(baseline.values["deletion-auc"]) == MIN_ORDERINGS
    assert baseline.mean("deletion-auc") == pytest.approx(np.mean(baseline.values["deletion-auc"]))


def test_random_comprehensiveness_counts_the_orderings_that_hit_the_keyword(keyword_classifier, enc):
    # comprehensiveness @20 % removes floor(0.2 * 10) = 2 words: it is large exactly when "excellent" is one of them
    metric = BY_ID["comprehensiveness-004"]
    baseline = random_baseline(keyword_classifier, enc, [metric], n=40, seed=5)
    hits = (random_orders(enc.n_words, 40, baseline.seed)[:, :2] == KEY).any(axis=1)
    values = np.asarray(baseline.values[metric.id])
    assert (values > 0.5).tolist() == hits.tolist()
    assert 0 < hits.sum() < 40


def test_band_and_flag(keyword_classifier, enc):
    metric = BY_ID["comprehensiveness-eraser"]
    baseline = random_baseline(keyword_classifier, enc, [metric], n=10, seed=1)
    low, high = baseline.band(metric.id)
    assert low <= baseline.mean(metric.id) <= high
    assert (low, high) == pytest.approx(tuple(np.quantile(baseline.values[metric.id], [0.025, 0.975])))
    perfect = np.zeros(len(WORDS))
    perfect[KEY] = 1.0
    good = evaluate_scores(keyword_classifier, enc, [metric], perfect).values[metric.id]
    assert good > high  # the keyword first: far above every random ordering here
    assert not baseline.flag(metric.id, good)
    assert baseline.flag(metric.id, baseline.mean(metric.id))
    assert baseline.flag(metric.id, float(np.median(baseline.values[metric.id])))
    curve = baseline.curve_band(metric.id)
    assert len(curve["mean"]) == len(curve["x"]) == 5
    assert all(lo - 1e-9 <= m <= hi + 1e-9 for lo, m, hi in zip(curve["low"], curve["mean"], curve["high"]))


def test_orderings_are_reproducible_per_input():
    assert orderings_seed(0, "abc") == orderings_seed(0, "abc")
    assert orderings_seed(0, "abc") != orderings_seed(1, "abc") != orderings_seed(0, "abd")
    assert (random_orders(7, 10, 3) == random_orders(7, 10, 3)).all()
    assert sorted(random_orders(7, 10, 3)[4]) == list(range(7))
    assert band([1.0, 2.0, np.nan]) == pytest.approx((1.025, 1.975))


def test_paired_comparison_verdicts():
    rng = np.random.default_rng(0)
    random_means = rng.uniform(0.1, 0.3, 200)
    better = compare_with_random(random_means + 0.05 + rng.normal(0, 0.01, 200), random_means)
    assert better.distinguishable and better.verdict == "better than random"
    assert better.difference.low > 0
    same = compare_with_random(random_means + rng.normal(0, 0.05, 200) - 0.0, random_means)
    assert same.difference.low < 0 < same.difference.high
    assert same.verdict == NOT_DISTINGUISHABLE
    # lower-is-better metrics: a method below random is the better one
    lower = compare_with_random(random_means - 0.05, random_means, higher_is_better=False)
    assert lower.verdict == "better than random"
    # one example: the verdict falls back to the orderings' band
    single = compare_with_random([0.5], [0.2], random_orderings=[[0.1, 0.2, 0.3]])
    assert single.verdict == "better than random"
    inside = compare_with_random([0.25], [0.2], random_orderings=[[0.1, 0.2, 0.3]])
    assert inside.verdict == NOT_DISTINGUISHABLE


def test_summarize_adds_the_random_comparison():
    rows = []
    for i in range(30):
        rows += [{"example_id": f"e{i}", "method": "good", "metric": "comprehensiveness-eraser",
                  "value": 0.5 + i / 100},
                 {"example_id": f"e{i}", "method": "same", "metric": "comprehensiveness-eraser",
                  "value": 0.1 + (0.02 if i % 2 else -0.02)},
                 {"example_id": f"e{i}", "method": RANDOM_METHOD, "metric": "comprehensiveness-eraser", "value": 0.1}]
    orderings = pd.DataFrame([{"example_id": f"e{i}", "metric": "comprehensiveness-eraser", "ordering": o,
                               "value": 0.1 + (o - 4.5) / 100} for i in range(30) for o in range(10)])
    table = summarize(pd.DataFrame(rows), orderings).set_index("method")
    assert table.loc["good", "vs_random"] == "better than random"
    assert table.loc["same", "vs_random"] == NOT_DISTINGUISHABLE
    assert table.loc["good", "random_mean"] == pytest.approx(0.1)
    # the band is the spread of the 10 per-ordering dataset means (0.055 .. 0.145)
    assert table.loc[RANDOM_METHOD, "random_low"] == pytest.approx(np.quantile(np.arange(10) / 100 + 0.055, 0.025))
    assert table.loc["good", "random_high"] == pytest.approx(np.quantile(np.arange(10) / 100 + 0.055, 0.975))


def test_options_change_what_the_baseline_measures(keyword_classifier, enc):
    metric = BY_ID["comprehensiveness-004"]
    deleted = random_baseline(keyword_classifier, enc, [metric], RemovalOptions(), n=10, seed=2)
    masked = random_baseline(keyword_classifier, enc, [metric], RemovalOptions(operator="mask"), n=10, seed=2)
    assert deleted.seed == masked.seed  # same orderings, another operator
    assert masked.curves[metric.id]["orderings"] != deleted.curves[metric.id]["orderings"]
