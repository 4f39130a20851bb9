"""ROAD for text: MoRF / LeRF curves with removed words imputed by the masked-LM filler, against a hand computation.

A deterministic stand-in filler (every removed word becomes "the") makes the imputation checkable: the hand path
writes each imputed sentence out, encodes it from scratch and classifies it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID, EVALUATOR_METRICS, PRESETS
from evaluation.metric import EVALUATORS, METRICS
from tolerances import float32_tolerance

WORDS = "the movie was excellent and long".split()
SCORES = np.array([0.1, 0.3, 0.2, 5.0, -1.0, 0.0])
ORDER = [3, 1, 2, 0, 5, 4]  # most to least relevant


class ReplaceWithThe:
    name = "fill-with-the"

    def fill(self, encoding, keep):
        return [[w if k else "the" for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


@pytest.fixture(scope="module")
def clf(keyword_classifier):
    return keyword_classifier


def imputed(clf, drop) -> float:
    words = ["the" if i in drop else w for i, w in enumerate(WORDS)]
    return float(clf.predict_proba([clf.encode(" ".join(words))])[0][1])


def test_morf_and_lerf_by_hand(clf):
    enc = clf.encode(" ".join(WORDS))
    counts = [math.ceil(round(0.1 * i * len(WORDS), 9)) for i in range(1, 10)]
    morf = np.mean([imputed(clf, set(ORDER[:c])) for c in counts])
    lerf = np.mean([imputed(clf, set(ORDER[len(ORDER) - c:])) for c in counts])
    result = evaluate_scores(clf, enc, [BY_ID["road-morf"], BY_ID["road-lerf"]], SCORES, RemovalOptions(),
                             filler_options={"filler": ReplaceWithThe()})
    assert result.values["road-morf"] == pytest.approx(morf, abs=float32_tolerance(1.0))
    assert result.values["road-lerf"] == pytest.approx(lerf, abs=float32_tolerance(1.0))
    # the keyword ranked first: imputing it first destroys the prediction, imputing it last keeps it to 90 %
    assert result.values["road-morf"] < 0.2 < 0.8 < result.values["road-lerf"]


def test_road_is_a_registered_preset_with_the_mlm_operator():
    assert EVALUATOR_METRICS["road"] == ("road-morf", "road-lerf") and "road" in PRESETS
    assert {m.id for m in EVALUATORS["road"].metrics} == {"road-morf", "road-lerf"}
    assert METRICS["road-morf"].operator == METRICS["road-lerf"].operator == "mlm"
    assert not METRICS["road-morf"].higher_is_better and METRICS["road-lerf"].higher_is_better
    assert "imputation" in METRICS["road-lerf"].reference
