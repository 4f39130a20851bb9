"""A removal curve's rows without one word are leave-one-out's rows (the comprehensiveness curve shares
perturbed inputs with leave-one-out): inside one ``sharing()`` block, after leave-one-out ran, they are read, not run
again; the values stay those of the curve run alone, and a leave-one-out with another operator serves nothing."""
from __future__ import annotations

import numpy as np
import pytest
from tolerances import float32_tolerance

from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from explainers import create
from explainers.shared_passes import sharing
from models import metered

# 12 words: ERASER's bins (1, 5, 10, 20, 50 %, floor) remove 0, 0, 1, 2 and 6 words; the 10 % bin removes the top
# word alone, so comprehensiveness has one row without one word (and sufficiency, keeping 1 word, none)
TEXT = "the movie was excellent and long but the plot was rather thin"
METRICS = [BY_ID["comprehensiveness-eraser"], BY_ID["sufficiency-eraser"]]


@pytest.fixture(scope="module")
def clf(keyword_classifier):
    return keyword_classifier


def curves(clf, encoding, scores):
    with metered() as meter:
        values = evaluate_scores(clf, encoding, METRICS, scores, RemovalOptions())
    return values, meter.forward_passes


def test_the_one_word_rows_come_from_leave_one_out_with_the_same_values(clf):
    encoding = clf.encode(TEXT)
    assert encoding.n_words == 12
    scores = np.linspace(1.0, 0.0, 12)  # the first word on top
    clf.logits_of(encoding)  # the input's own row, kept by the classifier: not counted in either run below
    alone, rows_alone = curves(clf, encoding, scores)
    with sharing():
        create("leave_one_out", operator="delete").explain(clf, encoding)
        shared, rows_shared = curves(clf, encoding, scores)
    assert rows_alone - rows_shared == 1  # the top word's row, read from leave-one-out's batch
    for metric in alone.values:
        assert shared.values[metric] == pytest.approx(alone.values[metric], abs=float32_tolerance(1.0))
    # the value computed another way: the 10 % bin's point is p(target) without word 0, the text encoded from scratch
    target = int(np.argmax(clf.logits_of(encoding)))
    without_top = clf.predict_proba([clf.encode(" ".join(TEXT.split()[1:]))])[0][target]
    curve = shared.curves["comprehensiveness-eraser"]
    assert curve.scores[curve.counts.index(1)] == pytest.approx(without_top, abs=float32_tolerance(1.0))


def test_leave_one_out_with_another_operator_serves_no_row(clf):
    encoding = clf.encode(TEXT)
    scores = np.linspace(1.0, 0.0, 12)
    clf.logits_of(encoding)
    _, rows_alone = curves(clf, encoding, scores)
    with sharing():
        create("leave_one_out", operator="mask").explain(clf, encoding)  # [MASK] rows: not deletion rows
        _, rows_shared = curves(clf, encoding, scores)
    assert rows_shared == rows_alone
