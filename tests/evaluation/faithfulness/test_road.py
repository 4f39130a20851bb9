"""ROAD for text: MoRF / LeRF curves with removed words imputed by the masked-LM filler, against a hand computation.

A deterministic stand-in filler (every removed word becomes "the") makes the imputation checkable: the hand path
writes each imputed sentence out, encodes it from scratch and classifies it.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from tolerances import float32_tolerance

from evaluation.baselines import orderings_seed, random_explanation
from evaluation.batch import evaluate_batch
from evaluation.faithfulness.curves import (
    RemovalOptions,
    base_logits,
    evaluate_scores,
    keep_rows,
    random_orders,
    rank_words,
    score_rows,
)
from evaluation.faithfulness.presets import BY_ID, EVALUATOR_METRICS, PRESETS
from evaluation.metric import EVALUATORS, METRICS
from models import metered

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


# ----- ROAD on DeletionBERT's grid, and the cost of one input -----------------------------
GRID = "deletionbert-grid"


class CountingFill(ReplaceWithThe):
    """The stand-in filler, counting its calls and the rows it is asked to fill."""

    def __init__(self):
        self.calls, self.rows = 0, 0

    def fill(self, encoding, keep):
        self.calls += 1
        self.rows += len(np.atleast_2d(keep))
        return super().fill(encoding, keep)


def test_road_on_deletion_berts_grid_by_hand(clf):
    """One word per step up to DeletionBERT's K = ceil(0.2 (n - 1)) (at least 2): 6 words -> K = 2."""
    enc = clf.encode(" ".join(WORDS))
    morf = np.mean([imputed(clf, set(ORDER[:c])) for c in (1, 2)])
    lerf = np.mean([imputed(clf, set(ORDER[len(ORDER) - c:])) for c in (1, 2)])
    metrics = [BY_ID[f"road-morf[{GRID}]"], BY_ID[f"road-lerf[{GRID}]"], BY_ID["deletion-bert-auc"]]
    result = evaluate_scores(clf, enc, metrics, SCORES, RemovalOptions(), filler_options={"filler": ReplaceWithThe()})
    assert result.values[f"road-morf[{GRID}]"] == pytest.approx(morf, abs=float32_tolerance(1.0))
    assert result.values[f"road-lerf[{GRID}]"] == pytest.approx(lerf, abs=float32_tolerance(1.0))
    # MoRF's points are DeletionBERT's points: the same removed sets, the same imputed inputs
    assert result.curves[f"road-morf[{GRID}]"].counts == result.curves["deletion-bert-auc"].counts == [1, 2]
    assert result.curves[f"road-morf[{GRID}]"].scores == result.curves["deletion-bert-auc"].scores
    assert result.curves[f"road-lerf[{GRID}]"].counts == [5, 4]  # kept: the top n - 1, n - 2 words
    assert EVALUATOR_METRICS["road-deletionbert-grid"] == (f"road-morf[{GRID}]", f"road-lerf[{GRID}]")
    assert "Rong et al." in PRESETS["road"] and "DeletionBERT's grid" in PRESETS["road-deletionbert-grid"]
    assert METRICS[f"road-lerf[{GRID}]"].operator == "mlm" and METRICS[f"road-lerf[{GRID}]"].higher_is_better


def filled_sentences(words, rows) -> set[str]:
    """The stand-in filler's sentences for these keep masks (bytes), the unperturbed sentence left out."""
    sentences = {" ".join(w if k else "the" for w, k in zip(words, np.frombuffer(row, dtype=bool))) for row in rows}
    return sentences - {" ".join(words)}


@pytest.mark.parametrize("evaluators", [["road"], ["road", "deletion-bert"], ["road-deletionbert-grid", "deletion-bert"]])
def test_every_fill_of_an_input_is_one_filler_call_and_one_classifier_batch(clf, evaluators):
    """MoRF and LeRF of every method's and random ordering of one input (and DeletionBERT beside them) are filled in
    one call for the distinct removed sets only, then classified together: as many forward passes as distinct sets."""
    enc = clf.encode("the movie was excellent and long but the plot was thin")
    n = enc.n_words
    explanations = {f"m{i}": random_explanation(enc, 1, clf.labels[1], np.random.default_rng(i).normal(size=n), 0, i)
                    for i in range(3)}
    filler = CountingFill()
    base_logits(clf, enc)  # the clean pass is memoized for every metric: count the curves' passes
    with metered() as meter:
        batch = evaluate_batch(evaluators, clf, enc, None, explanations, {"filler": filler, "target": 1}, 10)
    metrics = [BY_ID[m] for e in evaluators for m in EVALUATOR_METRICS[e]]
    assert filler.calls == 1 and set(batch.values[evaluators[0]]) == set(explanations)
    # the distinct removed sets, counted from the curves' keep masks of every ordering
    ranked = [rank_words(e.word_scores) for e in explanations.values()]
    all_orders = ranked + list(random_orders(n, 10, orderings_seed(0, enc.key)))
    rows = {row.tobytes() for m in metrics for order in all_orders for row in keep_rows(order, m.points(n, n)[0], m.mode)}
    rows.discard(np.ones(n, bool).tobytes())  # a point that removes nothing is the clean input
    assert filler.rows == len(rows)
    # the classifier sees each distinct imputed sentence once (the stand-in puts "the" back where it removes "the")
    assert meter.forward_passes == len(filled_sentences(enc.words, rows)) < len(rows)


def test_identical_imputed_inputs_are_classified_once_with_unchanged_values(clf):
    """Different removed sets can impute to one sentence (the masked LM's top-1 is often the removed word itself;
    here the stand-in fills "the" where "the" was): the engine's classifier call scores each distinct sentence once
    and a sentence equal to the input gets the clean logits. Values against classifying every row by hand."""
    enc = clf.encode("the movie was excellent and the plot was thin")
    n = enc.n_words
    keep = np.array([[j not in drop for j in range(n)]
                     for drop in [{0}, {5}, {0, 5}, {3}, {0, 3}, {3, 5}, {0, 3, 5}, {1}, {1, 2}, {2, 1}]])
    logits0 = base_logits(clf, enc)
    with metered() as meter:
        logits = score_rows(clf, enc, keep, "mlm", {"filler": ReplaceWithThe()}, logits0)
    by_hand = np.vstack([clf.predict_logits([clf.encode(" ".join(w if k else "the" for w, k in zip(enc.words, row)))])
                         for row in keep])
    assert logits == pytest.approx(by_hand, abs=float32_tolerance(np.abs(by_hand).max()))
    # {0}, {5}, {0, 5} give the input itself; {3}, {0, 3}, {3, 5}, {0, 3, 5} one sentence; {1}; {1, 2} twice
    assert meter.forward_passes == len(filled_sentences(enc.words, {row.tobytes() for row in keep})) == 3


def test_road_states_its_cost_per_curve_against_deletion_bert():
    """MoRF and LeRF are two metrics (two values on screen and in the export), so the metadata prices one curve
    against DeletionBERT's one curve (docs/benchmarks.md, "Newer measures")."""
    for metric_id in ("road-morf", "road-lerf", f"road-morf[{GRID}]", f"road-lerf[{GRID}]"):
        cost = METRICS[metric_id].params["cost"]
        assert cost.startswith("per curve") and "DeletionBERT" in cost and "x" in cost
    assert "cost" not in METRICS["deletion-bert-auc"].params  # only measures priced against another carry one
