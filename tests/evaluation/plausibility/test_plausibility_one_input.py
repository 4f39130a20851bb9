"""One explanation against one human rationale (evaluation/plausibility/one_input.py, what the page draws and
exports), on an input encoded by the tiny keyword model, against values worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.plausibility.metrics import PlausibilityConfig, make_config
from evaluation.plausibility.one_input import score_example

TEXT, PAIR = "the excellent movie", "was long"  # words: the excellent movie | was long
SCORES = [0.1, 0.9, -0.2, 0.45, 0.0]
HUMAN = (0, 1, 0, 1, 0)  # "excellent" and "was"


def test_alignment_binarization_and_metrics_by_hand(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT, PAIR)
    scored = score_example(encoding, SCORES, HUMAN, PlausibilityConfig())
    assert scored.words == ("the", "excellent", "movie", "was", "long") and scored.segments == (0, 0, 0, 1, 1)
    assert scored.human == HUMAN and scored.human_cut == 0
    # top-k: k = ceil(20 % of 5) = 1 -> the best word, "excellent"
    assert scored.k == 1 and scored.top_k.tolist() == [False, True, False, False, False]
    # threshold (paper 000): negatives zeroed, divided by the max .9 -> .111 1 0 .5 0; tau .5 keeps 1 and 3
    assert scored.threshold.tolist() == [False, True, False, True, False]
    # top-k {1} vs human {1, 3}: P 1, R 1/2, F1 2/3; threshold {1, 3} = human: P = R = F1 = IoU = 1
    # spans: predicted [1, 2); human [1, 2) and [3, 4) (different segments) -> 1 match: IoU F1 2/3
    # ranking excellent .9, was .45, the .1, long 0, movie -.2: both human words first -> AP 1, mean rank 2 (2/5)
    assert scored.metrics == pytest.approx({
        "plaus_token_precision_topk": 1, "plaus_token_recall_topk": 0.5, "plaus_token_f1_topk": 2 / 3,
        "plaus_token_precision_tau": 1, "plaus_token_recall_tau": 1, "plaus_token_f1_tau": 1, "plaus_iou_tau": 1,
        "plaus_iou_f1": 2 / 3, "plaus_auprc": 1, "plaus_precision_at_k": 1, "plaus_mean_rank": 2,
        "plaus_mean_rank_pct": 0.4, "plaus_coverage": 0.4, "plaus_human_coverage": 0.4,
        # ERASER script: span P 1/1, R 1/2; both human words ranked first: trapezoid AUPRC 1
        "plaus_iou_precision": 1, "plaus_iou_recall": 0.5, "plaus_auprc_trapezoid": 1})
    exported = scored.to_dict()
    assert exported["top_k"] == [0, 1, 0, 0, 0] and exported["threshold"] == [0, 1, 0, 1, 0]
    assert exported["scores"] == SCORES


def test_other_settings_change_the_selection(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT, PAIR)
    # k = number of human words (2): excellent, was; |score| with tau .2: |-.2| / .9 = .222 now passes too
    scored = score_example(encoding, SCORES, HUMAN, make_config("gt-length", sign="absolute", tau=0.2))
    assert scored.k == 2 and scored.top_k.tolist() == [False, True, False, True, False]
    assert scored.threshold.tolist() == [False, True, True, True, False]
    assert scored.metrics["plaus_token_precision_tau"] == pytest.approx(2 / 3)


def test_a_rationale_of_the_wrong_length_is_refused(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT, PAIR)
    with pytest.raises(ValueError, match="marks 3 words but the input has 5"):
        score_example(encoding, SCORES, (0, 1, 0), PlausibilityConfig())
    assert np.isfinite(score_example(encoding, SCORES, HUMAN).scores).all()
