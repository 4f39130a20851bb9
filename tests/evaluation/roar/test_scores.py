"""ROAR scores against values computed by hand: paper 001 Eq. 3 (the notes' worked example), logit-space
intervals, Welch p-values reproducing paper 000 Table 2d, the leakage check and the verdicts."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.roar import scores as roar_scores
from evaluation.roar.scores import logit_interval, relative_area, signed_logit_interval


def test_relative_area_reproduces_the_worked_example_of_the_notes():
    # seeds-000-001.md 001.3(d): numerator 0.10, denominator 0.25 -> 40 %
    assert relative_area([0, 0.5, 1], [0.9, 0.6, 0.5], [0.9, 0.8, 0.5]) == pytest.approx(0.40, abs=1e-12)


def test_relative_area_of_an_immediate_drop_against_a_linear_random_curve_is_90_percent():
    # the notes' caveat: the denominator's first trapezoid uses db_0 = b_0 - b_I != 0, so with 10 % steps an
    # "ideal" curve that reaches b_I at 10 % scores 0.9 against a linear random curve (computed by hand: 0.18 / 0.20)
    x = np.linspace(0, 1, 11)
    b = 0.9 - 0.4 * x
    p = np.where(x == 0, 0.9, 0.5)
    assert relative_area(x, p, b) == pytest.approx(0.9, abs=1e-12)
    assert relative_area(x, b, b) == 0.0  # the random curve itself
    assert relative_area(x, 1.0 - 0 * x, b) < 0  # above random: distinctly not faithful


def test_logit_interval_equals_the_direct_formula():
    values = np.array([0.81, 0.84, 0.79, 0.86, 0.83])
    logits = np.log(values / (1 - values))
    half = stats.t.ppf(0.975, 4) * logits.std(ddof=1) / math.sqrt(5)
    expit = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    result = logit_interval(values)
    assert result["mean"] == pytest.approx(expit(logits.mean()))
    assert result["low"] == pytest.approx(expit(logits.mean() - half))
    assert result["high"] == pytest.approx(expit(logits.mean() + half))
    assert result["low"] < result["mean"] < result["high"] and result["n"] == 5


def test_signed_interval_maps_minus_one_one_to_zero_one_and_back():
    values = np.array([0.2, 0.35, 0.3])
    mapped = logit_interval((values + 1) / 2)
    result = signed_logit_interval(values)
    assert result["mean"] == pytest.approx(2 * mapped["mean"] - 1)
    assert result["low"] == pytest.approx(2 * mapped["low"] - 1)
    one = signed_logit_interval([0.4])
    assert one["mean"] == pytest.approx(0.4) and one["low"] == one["high"] == pytest.approx(0.4)


def _values(mean: float, sd: float, n: int = 5) -> np.ndarray:
    base = np.arange(n) - (n - 1) / 2
    return mean + base / base.std(ddof=1) * sd


def _cell(kind, measure, ratio, seed, accuracy, step=0, n_test=200):
    return {"kind": kind, "measure": measure, "ratio": ratio, "seed": seed, "step": step, "accuracy": accuracy,
            "macro_f1": accuracy, "n_test": n_test, "masked_share": {"train": ratio / 100, "test": ratio / 100}}


def test_welch_table_reproduces_paper_000_table_2d():
    # ROAR N = 10 %: LOOempty 74.59 +- 0.78 vs IM 76.22 +- 1.18 over 5 models -> p = 0.0370 (0.0369 by Welch)
    cells = {}
    for name, mean, sd in (("loo", 0.7459, 0.0078), ("im", 0.7622, 0.0118)):
        for seed, value in enumerate(_values(mean, sd)):
            cells[f"{name}{seed}"] = _cell("roar", name, 10.0, seed, float(value))
    table = roar_scores.welch_table(roar_scores.cells_frame(cells))
    row = table[(table["measure_a"] == "loo") & (table["measure_b"] == "im")].iloc[0]
    assert row["p_value"] == pytest.approx(0.0369, abs=5e-4)
    assert row["mean_a"] == pytest.approx(0.7459)


def _study(random_curve, measure_curves, seeds=(0, 1), ratios=(10.0, 50.0), floor=0.5, top=0.9, jitter=0.01):
    cells = {}
    for seed in seeds:
        shift = jitter * seed
        cells[f"a0{seed}"] = _cell("anchor", "anchor", 0.0, seed, top + shift)
        cells[f"a100{seed}"] = _cell("anchor", "anchor", 100.0, seed, floor + shift)
        for ratio, value in zip(ratios, random_curve):
            cells[f"r{ratio}{seed}"] = _cell("roar", "random", ratio, seed, value + shift)
        for (kind, name), curve in measure_curves.items():
            for step, (ratio, value) in enumerate(zip(ratios, curve), start=1):
                cells[f"{kind}{name}{ratio}{seed}"] = _cell(kind, name, ratio, seed, value + shift,
                                                            step if kind == "recursive" else 0)
    return roar_scores.cells_frame(cells)


def test_summary_scores_each_seed_with_eq3_and_gives_the_papers_verdicts():
    frame = _study([0.85, 0.7], {("roar", "ig"): [0.6, 0.55], ("recursive", "ig"): [0.9, 0.72],
                                 ("roar", "loo"): [0.85, 0.7]})
    x = np.array([0, 0.1, 0.5, 1.0])
    for seed in (0, 1):
        s = 0.01 * seed
        expected = relative_area(x, np.array([0.9, 0.6, 0.55, 0.5]) + s, np.array([0.9, 0.85, 0.7, 0.5]) + s)
        assert roar_scores.per_seed_scores(frame, "roar", "ig")[seed] == pytest.approx(expected)
    summary = roar_scores.summary(frame).set_index(["mode", "measure"])
    assert summary.loc[("roar", "ig"), "score"] > 0.5
    assert summary.loc[("roar", "ig"), "verdict"].startswith("faithful")
    assert summary.loc[("roar", "loo"), "score"] == pytest.approx(0.0, abs=1e-9)  # identical to random
    assert summary.loc[("roar", "loo"), "verdict"].startswith("inconclusive")  # ROAR cannot prove unfaithfulness
    assert summary.loc[("recursive", "ig"), "verdict"] == "not faithful"  # above random under Recursive ROAR
    assert summary.loc[("roar", "ig"), "floor_100"] == pytest.approx(0.505)


def test_leakage_flags_accuracy_that_rises_as_more_is_masked():
    frame = _study([0.85, 0.7], {("roar", "attention"): [0.6, 0.75], ("roar", "ig"): [0.6, 0.55]},
                   seeds=(0, 1, 2))
    rises = roar_scores.leakage(frame, "roar", "attention")
    assert [(r["from"], r["to"]) for r in rises] == [(10.0, 50.0)]
    assert rises[0]["rise"] == pytest.approx(0.15) and rises[0]["significant"]
    assert roar_scores.leakage(frame, "roar", "ig") == []
    summary = roar_scores.summary(frame).set_index(["mode", "measure"])
    assert "+15.0% from 10 % to 50 % (significant" in summary.loc[("roar", "attention"), "leakage"]
    assert summary.loc[("roar", "attention"), "leakage_significant"]
    assert summary.loc[("roar", "ig"), "leakage"] == "" and not summary.loc[("roar", "ig"), "leakage_significant"]


def test_a_one_seed_rise_is_tested_against_the_test_set_size():
    # one model per point: a two-proportion z-test, one-sided; computed by hand for 0.60 -> 0.64 on 200 examples
    frame = _study([0.85, 0.7], {("roar", "ig"): [0.60, 0.64]}, seeds=(0,))
    (rise,) = roar_scores.leakage(frame, "roar", "ig")
    pooled = 0.62
    z = 0.04 / math.sqrt(pooled * (1 - pooled) * 2 / 200)
    assert rise["p_value"] == pytest.approx(1 - stats.norm.cdf(z)) and not rise["significant"]
    big = roar_scores.leakage(_study([0.85, 0.7], {("roar", "ig"): [0.60, 0.75]}, seeds=(0,)), "roar", "ig")
    assert big[0]["significant"]


def test_curves_put_the_anchors_on_every_curve_and_random_on_both_sides():
    frame = _study([0.85, 0.7], {("roar", "ig"): [0.6, 0.55], ("recursive", "ig"): [0.58, 0.52]})
    curves = roar_scores.curves(frame)
    random_recursive = curves[(curves["mode"] == "recursive") & (curves["measure"] == "random")]
    assert list(random_recursive["ratio"]) == [0.0, 10.0, 50.0, 100.0]
    ig = curves[(curves["mode"] == "roar") & (curves["measure"] == "ig")].set_index("ratio")
    assert ig.loc[10.0, "mean"] == pytest.approx(logit_interval([0.6, 0.61])["mean"])
    assert ig.loc[100.0, "n"] == 2


def test_failed_cells_are_left_out_of_the_frame():
    frame = roar_scores.cells_frame({"a": {"error": "boom"}, "b": _cell("anchor", "anchor", 0.0, 0, 0.9)})
    assert list(frame["accuracy"]) == [0.9]
    assert isinstance(frame, pd.DataFrame)


def _without_anchors(frame: pd.DataFrame) -> pd.DataFrame:
    return frame[frame["kind"] != "anchor"].reset_index(drop=True)


def test_eq3_is_refused_without_the_100_percent_floor():
    # random 0.85 -> 0.80 and a measure 0.80 -> 0.60 at 10 / 50 %, no anchors. Normalizing by random at 50 %
    # instead of the floor (what was printed before as +100 % [+100 %, +100 %]) gives, by hand,
    # numerator 1/2 * 0.4 * (0.05 + 0.20) = 0.05 over denominator 1/2 * 0.4 * (0.05 + 0) = 0.01: 5.0, not Eq. 3
    frame = _without_anchors(_study([0.85, 0.80], {("roar", "ig"): [0.80, 0.60]}))
    assert relative_area([0.1, 0.5], [0.80, 0.60], [0.85, 0.80]) == pytest.approx(5.0)
    assert roar_scores.per_seed_scores(frame, "roar", "ig") == {}
    row = roar_scores.summary(frame).set_index(["mode", "measure"]).loc[("roar", "ig")]
    assert math.isnan(row["score"]) and row["seeds"] == 0
    assert row["verdict"] == roar_scores.NO_FLOOR and "100 %-masked floor" in row["verdict"]


def test_a_seed_beyond_plus_100_percent_is_named_with_its_raw_value_not_hidden_by_the_clip():
    # the curve dips below the floor: x = 0, .1, .5, 1; b = .9, .85, .7, .5; p = .9, .3, .3, .5; by hand
    # numerator .05 * .55 + .2 * .95 + .25 * .4 = .3175, denominator .05 * .75 + .2 * .55 + .25 * .2 = .1975
    expected = 0.3175 / 0.1975
    frame = _study([0.85, 0.7], {("roar", "ig"): [0.3, 0.3]})
    assert roar_scores.per_seed_scores(frame, "roar", "ig") == pytest.approx({0: expected, 1: expected})
    row = roar_scores.summary(frame).set_index(["mode", "measure"]).loc[("roar", "ig")]
    assert row["score"] == pytest.approx(1.0, abs=1e-5)  # clipped for the interval, as paper 001's code does
    assert f"2 of 2 seeds outside [-100 %, +100 %] (raw {expected:+.0%}, {expected:+.0%}" in row["verdict"]
