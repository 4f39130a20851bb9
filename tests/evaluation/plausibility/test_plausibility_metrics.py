"""Plausibility metrics (agreement with people, not faithfulness) against values computed by hand.

Each case lists the scores, the human mask and the expected value worked out on paper in the comment.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import average_precision_score

from evaluation.metric import RANDOM_METHOD as RANDOM
from evaluation.plausibility.dataset import metric_table, paper000_table, sweep_curves, wide_table
from evaluation.plausibility.metrics import PlausibilityConfig, example_metrics, make_config, sweep_metrics
from evaluation.plausibility.rationale_scores import (
    TAUS,
    average_precision,
    binarize_threshold,
    binarize_top_k,
    iou_f1,
    rank_scores,
    set_scores,
    spans,
    sweep,
    top_k_size,
)

CONFIG = PlausibilityConfig()  # top-k 20 %, tau 0.5, signed (negatives zeroed), pessimistic ties


def test_simple_example_every_metric():
    # scores .9 -.2 .5 .1 0, human {0, 2}; k = ceil(.2 * 5) = 1 -> {0}: P 1, R 1/2, F1 2/3
    # tau .5: normalized 1 0 .556 .111 0 -> {0, 2} = H: P = R = F1 = IoU = 1, coverage 2/5
    # spans from top-k: predicted [0,1), human [0,1) [2,3) -> 1 match: P 1, R 1/2, F1 2/3
    # ranking 0, 2, 3, 4, 1: both human words first -> AP 1, precision@2 = 1, mean rank 2, 2/5
    m = example_metrics([0.9, -0.2, 0.5, 0.1, 0.0], [1, 0, 1, 0, 0], CONFIG)
    expected = {"plaus_token_precision_topk": 1, "plaus_token_recall_topk": 0.5, "plaus_token_f1_topk": 2 / 3,
                "plaus_token_precision_tau": 1, "plaus_token_recall_tau": 1, "plaus_token_f1_tau": 1,
                "plaus_iou_tau": 1, "plaus_iou_f1": 2 / 3, "plaus_auprc": 1, "plaus_precision_at_k": 1,
                "plaus_mean_rank": 2, "plaus_mean_rank_pct": 0.4, "plaus_coverage": 0.4, "plaus_human_coverage": 0.4,
                # ERASER script: span P 1/1, R 1/2; PR curve (R, P) = (0, 1) (.5, 1) (1, 1): trapezoid area 1
                "plaus_iou_precision": 1, "plaus_iou_recall": 0.5, "plaus_auprc_trapezoid": 1}
    assert m == pytest.approx(expected)


def test_ties_pessimistic_and_reading_order():
    # scores 1 1 0 0, human {0}: pessimistic ranking puts the tied non-human word 1 first
    scores, human = [1.0, 1.0, 0.0, 0.0], [1, 0, 0, 0]
    pessimistic = example_metrics(scores, human, CONFIG)
    assert pessimistic["plaus_token_precision_topk"] == 0  # top-1 = {1}
    assert pessimistic["plaus_precision_at_k"] == 0
    assert pessimistic["plaus_mean_rank"] == 2 and pessimistic["plaus_mean_rank_pct"] == 0.5
    reading = example_metrics(scores, human, make_config(ties="reading-order"))
    assert reading["plaus_token_precision_topk"] == 1 and reading["plaus_mean_rank"] == 1
    # AP groups the tie: at score 1 two words, one human -> P 1/2 at R 1 -> AP 1/2 (either tie rule)
    assert pessimistic["plaus_auprc"] == reading["plaus_auprc"] == pytest.approx(0.5)
    # tau .5: A = {0, 1}, H = {0}: IoU 1/2, P 1/2, R 1, F1 2/3
    assert pessimistic["plaus_iou_tau"] == 0.5 and pessimistic["plaus_token_f1_tau"] == pytest.approx(2 / 3)


def test_constant_explanation_gets_no_credit():
    # all scores 0, human {2} of 4: pessimistic rank 4 (100 %), precision@1 0, AP = 1/4 (one tied group),
    # threshold: max <= 0 -> nothing highlighted: P 0, R 0, IoU 0, coverage 0
    m = example_metrics([0.0, 0.0, 0.0, 0.0], [0, 0, 1, 0], CONFIG)
    assert m["plaus_mean_rank"] == 4 and m["plaus_mean_rank_pct"] == 1.0
    assert m["plaus_precision_at_k"] == 0 and m["plaus_auprc"] == pytest.approx(0.25)
    assert (m["plaus_token_precision_tau"], m["plaus_token_recall_tau"], m["plaus_iou_tau"], m["plaus_coverage"]) \
        == (0, 0, 0, 0)


def test_no_human_words():
    # scores .3 .7 -.1, human none: top-1 = {1}: P 0 (H empty, A not), R 1 (H empty), F1 0
    # tau .5: .43 1 0 -> A = {1}: IoU 0/1 = 0; rank metrics and AP undefined (NaN, left out of means)
    m = example_metrics([0.3, 0.7, -0.1], [0, 0, 0], CONFIG)
    assert (m["plaus_token_precision_topk"], m["plaus_token_recall_topk"], m["plaus_token_f1_topk"]) == (0, 1, 0)
    assert (m["plaus_token_precision_tau"], m["plaus_token_recall_tau"], m["plaus_iou_tau"]) == (0, 1, 0)
    assert m["plaus_iou_f1"] == 0  # one predicted span, no human span
    for key in ("plaus_auprc", "plaus_precision_at_k", "plaus_mean_rank", "plaus_mean_rank_pct"):
        assert math.isnan(m[key])
    assert m["plaus_coverage"] == pytest.approx(1 / 3) and m["plaus_human_coverage"] == 0
    # k = |H| = 0 selects nothing: both sets empty -> P = R = F1 = 1 and span F1 1
    empty = example_metrics([0.3, 0.7, -0.1], [0, 0, 0], make_config(top_k="human"))
    assert (empty["plaus_token_precision_topk"], empty["plaus_token_recall_topk"], empty["plaus_token_f1_topk"],
            empty["plaus_iou_f1"]) == (1, 1, 1, 1)


def test_all_words_human():
    # scores .2 -.5 .1, all human: top-1 {0}: P 1, R 1/3, F1 1/2; tau .5 -> 1 0 .5 -> {0, 2}: IoU 2/3, P 1,
    # R 2/3, F1 .8; spans [0,1) vs [0,3): IoU 1/3 < .5 -> no match -> 0; AP 1; precision@3 1; rank 3
    m = example_metrics([0.2, -0.5, 0.1], [1, 1, 1], CONFIG)
    assert m["plaus_token_f1_topk"] == pytest.approx(0.5) and m["plaus_token_recall_topk"] == pytest.approx(1 / 3)
    assert m["plaus_iou_tau"] == pytest.approx(2 / 3) and m["plaus_token_f1_tau"] == pytest.approx(0.8)
    assert m["plaus_iou_f1"] == 0 and m["plaus_auprc"] == 1 and m["plaus_precision_at_k"] == 1
    assert m["plaus_mean_rank"] == 3 and m["plaus_mean_rank_pct"] == 1 and m["plaus_human_coverage"] == 1


def test_single_word():
    assert example_metrics([0.4], [1], CONFIG) == pytest.approx(
        {"plaus_token_precision_topk": 1, "plaus_token_recall_topk": 1, "plaus_token_f1_topk": 1,
         "plaus_token_precision_tau": 1, "plaus_token_recall_tau": 1, "plaus_token_f1_tau": 1, "plaus_iou_tau": 1,
         "plaus_iou_f1": 1, "plaus_auprc": 1, "plaus_precision_at_k": 1, "plaus_mean_rank": 1,
         "plaus_mean_rank_pct": 1, "plaus_coverage": 1, "plaus_human_coverage": 1,
         "plaus_iou_precision": 1, "plaus_iou_recall": 1, "plaus_auprc_trapezoid": 1})
    # a single negative score: paper 000 zeroes it, so nothing passes any tau (P 0, R 0), and top-1 leaves it out
    # too (a negative score is "not highlighted" in both binarizations; a top-1 that picked it gave F1 1)
    negative = example_metrics([-0.4], [1], CONFIG)
    assert (negative["plaus_token_recall_tau"], negative["plaus_iou_tau"], negative["plaus_coverage"]) == (0, 0, 0)
    assert negative["plaus_token_f1_topk"] == 0
    # with |score| ("marc-abs" preset) the magnitude counts
    assert example_metrics([-0.4], [1], make_config("marc-abs"))["plaus_iou_tau"] == 1
    not_human = example_metrics([0.4], [0], CONFIG)
    assert (not_human["plaus_token_precision_topk"], not_human["plaus_iou_tau"]) == (0, 0)
    assert math.isnan(not_human["plaus_auprc"])


def test_negative_scores_never_enter_the_top_k():
    # scores .9 .2 -.1 -.5, human {0, 2}, k = 3. Ranked: 0 (.9), 1 (.2), 2 (-.1), 3 (-.5).
    # signed: only words 0 and 1 are positive -> A = {0, 1}: P 1/2, R 1/2, F1 1/2 (before: A = {0, 1, 2}: P 2/3, R 1)
    scores, human = [0.9, 0.2, -0.1, -0.5], [1, 0, 1, 0]
    signed = example_metrics(scores, human, make_config(top_k="3"))
    assert (signed["plaus_token_precision_topk"], signed["plaus_token_recall_topk"], signed["plaus_token_f1_topk"]) \
        == pytest.approx((0.5, 0.5, 0.5))
    # the same as the threshold binarization at a tau that keeps every positive word (.2 / .9 = .22 >= .2)
    assert binarize_threshold(scores, 0.2).tolist() == binarize_top_k(scores, human, 3).tolist() \
        == [True, True, False, False]
    # |score| ranks 0 (.9), 3 (.5), 1 (.2): A = {0, 1, 3}: P 1/3, R 1/2, F1 .4
    absolute = example_metrics(scores, human, make_config(top_k="3", sign="absolute"))
    assert (absolute["plaus_token_precision_topk"], absolute["plaus_token_recall_topk"]) == pytest.approx((1 / 3, 0.5))
    assert absolute["plaus_token_f1_topk"] == pytest.approx(0.4)
    # a zero score is no evidence either way: never highlighted; rankings still order every word
    assert binarize_top_k([0.0, 0.0, 0.3], [1, 0, 0], 2).tolist() == [False, False, True]
    assert example_metrics(scores, human, make_config(top_k="3"))["plaus_mean_rank"] == 3  # word 2 is third


def test_set_scores_conventions_of_paper_000():
    assert set_scores([0, 0], [0, 0]) == {"iou": 1, "precision": 1, "recall": 1, "f1": 1}
    assert set_scores([1, 0], [0, 0]) == {"iou": 0, "precision": 0, "recall": 1, "f1": 0}
    assert set_scores([0, 0], [1, 0]) == {"iou": 0, "precision": 0, "recall": 0, "f1": 0}
    # A = {0, 1, 2}, H = {1, 2, 3}: IoU 2/4, P 2/3, R 2/3
    assert set_scores([1, 1, 1, 0], [0, 1, 1, 1]) == pytest.approx(
        {"iou": 0.5, "precision": 2 / 3, "recall": 2 / 3, "f1": 2 / 3})


def test_threshold_binarization_keeps_tau_itself():
    # .3 / 1 = .3 passes tau .3 although 0.05 * 6 = 0.30000000000000004 in floats
    assert binarize_threshold([1.0, 0.3, 0.29], 0.05 * 6).tolist() == [True, True, False]
    assert TAUS[0] == 0.05 and TAUS[-1] == 0.95 and len(TAUS) == 19


def test_spans_and_iou_f1_with_pair_boundary():
    assert spans([1, 1, 0, 1]) == [(0, 2), (3, 4)]
    assert spans([1, 1, 1, 0], segments=[0, 0, 1, 1]) == [(0, 2), (2, 3)]
    # human 1 1 | 1 0, prediction {2}: with the boundary the human spans are [0,2) and [2,3): one exact match
    # -> P 1, R 1/2, F1 2/3; without it one human span [0,3): IoU 1/3 -> no match
    assert iou_f1([0, 0, 1, 0], [1, 1, 1, 0], segments=[0, 0, 1, 1])["f1"] == pytest.approx(2 / 3)
    assert iou_f1([0, 0, 1, 0], [1, 1, 1, 0])["f1"] == 0
    # IoU exactly .5 matches (ERASER code uses >=): predicted [1,2) vs human [0,2)
    assert iou_f1([0, 1, 0], [1, 1, 0])["f1"] == 1
    # predicted [0,3) vs human [0,1): IoU 1/3 -> no match
    assert iou_f1([1, 1, 1], [1, 0, 0])["f1"] == 0


def test_average_precision_matches_sklearn():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        scores = rng.integers(-2, 3, size=n).astype(float)  # many ties
        human = rng.integers(0, 2, size=n)
        if human.sum() == 0:
            continue
        assert average_precision(scores, human) == pytest.approx(average_precision_score(human, scores))


def test_average_precision_by_hand():
    # order .9 (h) .8 (-) .7 (h): P@1 = 1 at R 1/2, P@3 = 2/3 at R 1 -> AP = 1/2 + 1/2 * 2/3 = 5/6
    assert average_precision([0.9, 0.8, 0.7], [1, 0, 1]) == pytest.approx(5 / 6)


def test_rank_scores_by_hand():
    # signed ranking 3 (.7), 0 (.5), 2 (-.5), 1 (-.9): human {0, 2} are at positions 2 and 3 -> mean rank 3, 3/4;
    # top-2 = {3, 0}: one human word -> precision@2 = 1/2
    result = rank_scores([0.5, -0.9, -0.5, 0.7], [1, 0, 1, 0])
    assert result == pytest.approx({"precision_at_k": 0.5, "mean_rank": 3, "mean_rank_pct": 0.75})
    # absolute: |scores| .5 .9 .5 .7 -> 1 (.9), 3 (.7), then 0 and 2 tie at .5 -> human {0, 2} at 3, 4
    assert rank_scores([0.5, -0.9, -0.5, 0.7], [1, 0, 1, 0], sign="absolute")["mean_rank"] == 4


def test_top_k_sizes():
    assert top_k_size("20%", 5, 2) == 1 and top_k_size("20%", 6, 2) == 2  # ceil(1.2) = 2
    assert top_k_size("25", 10, 2) == 10 and top_k_size("25", 40, 2) == 25
    assert top_k_size("human", 10, 3) == 3
    for bad in ("0%", "abc", "-3", "150%"):
        with pytest.raises(ValueError, match="top_k"):
            make_config(top_k=bad)
    with pytest.raises(ValueError, match="Unknown plausibility preset"):
        make_config("nope")
    with pytest.raises(ValueError, match="tau"):
        make_config(tau="0")


def test_sweep_per_example_by_hand():
    # scores 1 .5 0, human {0}: tau <= .5 -> {0, 1}: P 1/2, R 1, IoU 1/2; tau > .5 -> {0}: all 1
    result = sweep([1.0, 0.5, 0.0], [1, 0, 0])
    low = [i for i, t in enumerate(TAUS) if t <= 0.5]
    high = [i for i, t in enumerate(TAUS) if t > 0.5]
    assert np.allclose(result["precision"][low], 0.5) and np.allclose(result["precision"][high], 1)
    assert np.allclose(result["coverage"][low], 2 / 3) and np.allclose(result["coverage"][high], 1 / 3)
    assert np.allclose(result["recall"], 1)


def _frame(per_example: dict[str, dict[str, float]], method: str = "m") -> pd.DataFrame:
    return pd.DataFrame([{"example_id": ex, "method": method, "metric": k, "value": v}
                         for ex, values in per_example.items() for k, v in values.items()])


def test_paper000_dataset_protocol_f1_of_averages():
    # ex1: scores 1 .5 0, human {0}: tau <= .5 -> P 1/2 R 1 IoU 1/2; tau > .5 -> P 1 R 1 IoU 1
    # ex2: scores .2 1, human {0, 1}: tau <= .2 -> P 1 R 1 IoU 1; tau > .2 -> P 1 R 1/2 IoU 1/2
    # averages: tau <= .2: P .75 R 1 -> F1 6/7; (.2, .5]: P .75 R .75 -> F1 .75; > .5: P 1 R .75 -> F1 6/7
    # best F1 6/7, tie broken by the smallest tau (.05); the mean of per-example F1s there would be (2/3 + 1)/2
    frame = _frame({"ex1": sweep_metrics([1.0, 0.5, 0.0], [1, 0, 0]), "ex2": sweep_metrics([0.2, 1.0], [1, 1])})
    curves = sweep_curves(frame).set_index("tau")
    assert curves.loc[0.05, "f1"] == pytest.approx(6 / 7) and curves.loc[0.35, "f1"] == pytest.approx(0.75)
    assert curves.loc[0.95, "precision"] == 1 and curves.loc[0.95, "recall"] == 0.75
    table = paper000_table(frame).iloc[0]
    assert table["best_tau"] == 0.05 and table["f1"] == pytest.approx(6 / 7)
    assert table["f1"] != pytest.approx((2 / 3 + 1) / 2)
    assert (table["precision"], table["recall"], table["iou"]) == pytest.approx((0.75, 1, 0.75))
    assert table["coverage"] == pytest.approx((2 / 3 + 1) / 2)
    assert table["f1_low"] <= table["f1"] <= table["f1_high"]
    # by IoU: (.2, .5] gives (1/2 + 1/2)/2 = .5; tau <= .2 and > .5 give .75 -> again .05 first
    assert paper000_table(frame, select_by="iou").iloc[0]["iou"] == pytest.approx(0.75)


def test_paper000_ci_collapses_for_identical_examples():
    same = sweep_metrics([1.0, 0.5, 0.0], [1, 0, 0])
    row = paper000_table(_frame({"a": same, "b": same, "c": same})).iloc[0]
    assert row["f1_low"] == pytest.approx(row["f1"]) == pytest.approx(row["f1_high"])


def test_metric_table_means_and_random_row_last():
    per_example = {"a": {"plaus_token_f1_topk": 1.0, "plaus_auprc": float("nan")},
                   "b": {"plaus_token_f1_topk": 0.0, "plaus_auprc": 0.5}}
    frame = pd.concat([_frame(per_example, RANDOM), _frame(per_example, "saliency")])
    table = metric_table(frame)
    f1_row = table[(table["method"] == "saliency") & (table["metric"] == "plaus_token_f1_topk")].iloc[0]
    assert f1_row["mean"] == 0.5 and f1_row["n"] == 2 and f1_row["low"] <= 0.5 <= f1_row["high"]
    auprc = table[(table["method"] == "saliency") & (table["metric"] == "plaus_auprc")].iloc[0]
    assert auprc["mean"] == 0.5 and auprc["n"] == 1  # the NaN (no human words) is left out
    wide = wide_table(table)
    assert list(wide.index) == ["saliency", RANDOM]
    assert wide.loc["saliency"].iloc[0].startswith("0.500 [")
