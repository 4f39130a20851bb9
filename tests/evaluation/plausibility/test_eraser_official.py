"""ERASER's official scoring script (rationale_benchmark/metrics.py) against our ERASER-style numbers.

Each expected value is the script's formula written out by hand for a small input (never its code): its
``partial_match_score`` macro average (per-example span precision over examples with a predicted span, recall over
examples with a human span, then the F1 of the two means) and its ``_auprc`` (sklearn's precision-recall curve, the
trapezoid area ``auc(recall, precision)``, averaged over documents).
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.metric import METRICS
from evaluation.plausibility.dataset import ERASER_OFFICIAL, eraser_official_table
from evaluation.plausibility.metrics import PlausibilityConfig, example_metrics
from evaluation.plausibility.rationale_scores import (
    auprc_trapezoid,
    average_precision,
    iou_f1_of_means,
    iou_span_scores,
)

# (selected words, human words): the spans and the script's per-example numbers worked out in the comments
CASES = [
    # predicted spans [0,2) [5,6); human [0,2) [4,5): [0,2) matches (IoU 1), [5,6) does not -> P 1/2, R 1/2
    ([1, 1, 0, 0, 0, 1], [1, 1, 0, 0, 1, 0]),
    # predicted [1,3); human [2,4): IoU 1/3 < 0.5 -> P 0, R 0
    ([0, 1, 1, 0], [0, 0, 1, 1]),
    # nothing highlighted: not in the script's precision average; R 0 / 1 = 0
    ([0, 0, 0], [1, 0, 0]),
]


def test_iou_f1_is_the_f1_of_the_averaged_span_precision_and_recall():
    spans = [iou_span_scores(np.array(s, bool), np.array(h, bool)) for s, h in CASES]
    assert [d["precision"] for d in spans][:2] == [0.5, 0.0] and np.isnan(spans[2]["precision"])
    assert [d["recall"] for d in spans] == [0.5, 0.0, 0.0]
    macro_p, macro_r = (0.5 + 0.0) / 2, (0.5 + 0.0 + 0.0) / 3  # 1/4 and 1/6
    by_hand = 2 * macro_p * macro_r / (macro_p + macro_r)  # = 0.2
    ours = iou_f1_of_means([d["precision"] for d in spans], [d["recall"] for d in spans])
    assert ours == pytest.approx(by_hand) and by_hand == pytest.approx(0.2)
    # the per-example F1 averaged (plaus_iou_f1) is another number: (1/2 + 0 + 0) / 3
    assert by_hand != pytest.approx(1 / 6)


def test_auprc_is_the_trapezoid_area_not_average_precision():
    scores, human = [0.8, 0.1, 0.4, 0.3], [1, 0, 0, 1]
    # descending: .8 (human) -> P 1, R 1/2; .4 -> P 1/2, R 1/2; .3 (human) -> P 2/3, R 1; then the (R 0, P 1) end
    recall = [0.0, 0.5, 0.5, 1.0]
    precision = [1.0, 1.0, 0.5, 2 / 3]
    trapezoid = sum((recall[i + 1] - recall[i]) * (precision[i + 1] + precision[i]) / 2 for i in range(3))
    assert trapezoid == pytest.approx(0.5 + 0.5 * (0.5 + 2 / 3) / 2)
    assert auprc_trapezoid(scores, human) == pytest.approx(trapezoid)
    step = 0.5 * 1.0 + 0.5 * (2 / 3)  # average precision: sum of (R_k - R_k-1) P_k
    assert average_precision(scores, human) == pytest.approx(step) and step != pytest.approx(trapezoid)
    assert np.isnan(auprc_trapezoid(scores, [0, 0, 0, 0]))


def test_dataset_table_reproduces_the_script_and_names_its_conventions():
    config = PlausibilityConfig(top_k="2")  # 2 words per example -> spans as written below
    examples = {"a": ([0.9, 0.8, 0.0, 0.1, 0.0, 0.0], [1, 1, 0, 0, 1, 0]),  # top-2 [0,2) vs [0,2) [4,5): P 1, R 1/2
                "b": ([0.0, 0.9, 0.8, 0.0], [0, 0, 1, 1]),  # top-2 [1,3) vs [2,4): IoU 1/3 -> P 0, R 0
                "c": ([0.5, 0.2, 0.9], [1, 0, 0])}  # top-2 {0, 2}: spans [0,1) [2,3) vs [0,1): P 1/2, R 1
    rows = []
    for example_id, (scores, human) in examples.items():
        values = example_metrics(scores, human, config)
        rows += [{"example_id": example_id, "method": "m", "metric": k, "value": v} for k, v in values.items()]
    table = eraser_official_table(pd.DataFrame(rows), resamples=200).set_index("method")
    macro_p, macro_r = (1 + 0 + 0.5) / 3, (0.5 + 0 + 1) / 3
    assert table.loc["m", "iou_f1"] == pytest.approx(2 * macro_p * macro_r / (macro_p + macro_r))
    token_f1 = [2 * (2 / 2 * 2 / 3) / (1 + 2 / 3), 2 * (1 / 2 * 1 / 2) / 1, 2 * (1 / 2 * 1) / 1.5]
    assert table.loc["m", "token_f1"] == pytest.approx(np.mean(token_f1))
    assert table.loc["m", "iou_f1_low"] <= table.loc["m", "iou_f1"] <= table.loc["m", "iou_f1_high"]
    assert "F1 of the mean" in ERASER_OFFICIAL["iou_f1"] and "trapezoid" in ERASER_OFFICIAL["auprc"]
    for metric_id in ("plaus_iou_precision", "plaus_iou_recall", "plaus_auprc_trapezoid"):
        assert "ERASER script" in METRICS[metric_id].label
        assert "rationale_benchmark/metrics.py" in METRICS[metric_id].reference
