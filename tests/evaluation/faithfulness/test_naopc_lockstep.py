"""NAOPC's bounds of several inputs searched in lockstep (``naopc_lockstep.prefill_bounds``, a dataset run's batch
hook) give the one-input searches' bounds, in about max(n) engine calls for a window instead of sum(n)."""
from __future__ import annotations

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv
from tolerances import float32_tolerance

from corpora import load_dataset
from evaluation.faithfulness import naopc, naopc_bounds, naopc_lockstep
from evaluation.faithfulness.curves import RemovalOptions, base_logits, evaluate_orders, random_orders
from evaluation.runs.store import ResultStore
from evaluation.suite.runner import evaluate_example, run_evaluation, start_evaluation
from evaluation.summary import results_frame
from explainers import cache as cache_module
from explainers.params import options_from
from models import TextClassifier, cached_classifier, metered

# 4 to 14 words: the default searches the first three exactly (<= 8 words), the others with the beam
TEXTS = ("the film was excellent", "a movie with some music and actors", "this story had some scenes with old actors",
         "the plot was long and the music was quite dull", "it is a very long film with some old actors and music",
         "the movie was not good but the scenes with music and the actors")


def one_input_bounds(clf, encodings, classes, removal, search):
    """Each input's bounds from ``aopc_bounds`` alone (``exact_search`` / ``beam_search`` on its own rows)."""
    naopc_bounds._cache.clear()
    return [naopc_bounds.aopc_bounds(clf, e, removal, search, t) for e, t in zip(encodings, classes)]


def lockstep_bounds(clf, encodings, classes, removal, search, **kwargs):
    naopc_bounds._cache.clear()
    assert naopc_lockstep.prefill_bounds(clf, encodings, classes, removal, search, **kwargs) == len(encodings)
    return [naopc_bounds._memoized(clf, naopc_bounds._memo_key(e, t, removal, search, naopc_bounds.METRICS))
            for e, t in zip(encodings, classes)]


@pytest.mark.parametrize("width", [1, 3])
@pytest.mark.parametrize("operator", ["delete", "mask"])
def test_lockstep_bounds_equal_the_one_input_searches(random_classifier, width, operator):
    """A graded landscape (random weights: no ties for a batching's rounding to break another way)."""
    clf = random_classifier
    encodings = [clf.encode(t) for t in TEXTS]
    assert [e.n_words for e in encodings] == [4, 7, 8, 10, 12, 13]
    classes = [int(np.argmax(base_logits(clf, e))) for e in encodings]
    removal, search = RemovalOptions(operator=operator), naopc_bounds.NaopcOptions(naopc_beam=width)
    alone = one_input_bounds(clf, encodings, classes, removal, search)
    together = lockstep_bounds(clf, encodings, classes, removal, search)
    for encoding, single, joint in zip(encodings, alone, together):
        assert joint.search == single.search == (naopc_bounds.EXACT if encoding.n_words <= 8 else naopc_bounds.BEAM)
        for metric in naopc_bounds.METRICS:  # a sum of n float32 probability differences over n + 1
            np.testing.assert_allclose(joint.values[metric.id], single.values[metric.id], rtol=0,
                                       atol=float32_tolerance(1.0))
        if joint.search == naopc_bounds.EXACT:  # the whole subset table, so the orderings' AOPCs read off it agree too
            for curve, found in joint.searches.items():
                np.testing.assert_allclose(found.terms, single.searches[curve].terms, rtol=0,
                                           atol=float32_tolerance(1.0))


def wide_batches(clf) -> TextClassifier:
    """The same model with room for a whole step's rows in one forward batch: a batch is then one engine call."""
    return TextClassifier(clf.model, clf.tokenizer, name=f"{clf.name}-wide", device="cpu", max_batch_tokens=10 ** 6)


def test_a_window_costs_max_n_engine_calls_not_sum_n(random_classifier):
    """With [MASK] every row of an input has its token length; three inputs of 12 tokens and 12, 10 and 8 words
    (``unbelievably`` is 3 word pieces) put a step's rows in one length band: one call per step of the longest
    search, where the inputs one at a time take one per step each. The same distinct rows are scored."""
    clf = wide_batches(random_classifier)
    texts = ("the movie was a film that this story had some scenes with",
             "unbelievably the movie was a film that this story had",
             "unbelievably unbelievably the movie was a film that")
    encodings = [clf.encode(t) for t in texts]
    assert [e.n_words for e in encodings] == [12, 10, 8] and len({e.n_tokens for e in encodings}) == 1
    classes = [int(np.argmax(base_logits(clf, e))) for e in encodings]  # the clean passes are memoized apart
    removal, search = RemovalOptions(operator="mask"), naopc_bounds.NaopcOptions(naopc_exact_words=1)
    with metered() as alone:
        one_input_bounds(clf, encodings, classes, removal, search)
    with metered() as together:
        lockstep_bounds(clf, encodings, classes, removal, search)
    assert alone.batches == 12 + 10 + 8
    assert together.batches == 12
    assert together.forward_passes == alone.forward_passes
    # the exact search of short inputs joins the first step: every subset of them in that step's call
    mixed = naopc_bounds.NaopcOptions(naopc_exact_words=10)
    with metered() as exact_too:
        bounds = lockstep_bounds(clf, encodings, classes, removal, mixed)
    assert [b.search for b in bounds] == [naopc_bounds.BEAM, naopc_bounds.EXACT, naopc_bounds.EXACT]
    assert exact_too.batches == 12
    with metered() as longest_alone:
        one_input_bounds(clf, encodings[:1], classes[:1], removal, search)
    assert exact_too.forward_passes == longest_alone.forward_passes + (2 ** 10 - 1) + (2 ** 8 - 1)


def test_a_row_cap_splits_the_calls_and_keeps_the_bounds(random_classifier):
    clf = wide_batches(random_classifier)
    encodings = [clf.encode(t) for t in TEXTS[3:]]
    classes = [int(np.argmax(base_logits(clf, e))) for e in encodings]
    removal, search = RemovalOptions(), naopc_bounds.NaopcOptions()
    whole = lockstep_bounds(clf, encodings, classes, removal, search)
    with metered() as capped_meter:
        capped = lockstep_bounds(clf, encodings, classes, removal, search, max_rows=5)
    # the first step has 10 + 12 + 13 leave-one-out rows: at least ceil(35 / 5) calls
    assert capped_meter.batches >= 7 + 12
    for a, b in zip(whole, capped):
        for metric in naopc_bounds.METRICS:
            np.testing.assert_allclose(a.values[metric.id], b.values[metric.id], rtol=0, atol=float32_tolerance(1.0))


def test_memoized_inputs_are_not_searched_again(random_classifier):
    clf = random_classifier
    encodings = [clf.encode(t) for t in TEXTS[:3]]
    classes = [int(np.argmax(base_logits(clf, e))) for e in encodings]
    removal, search = RemovalOptions(), naopc_bounds.NaopcOptions()
    lockstep_bounds(clf, encodings[:2], classes[:2], removal, search)
    with metered() as meter:
        assert naopc_lockstep.prefill_bounds(clf, encodings + encodings[:1], classes + classes[:1], removal, search) == 1
    assert meter.forward_passes == 2 ** encodings[2].n_words - 1  # the third input alone, once


def test_the_orderings_curves_reuse_the_rows_the_beam_scored(random_classifier):
    """Above the exact threshold every ordering's AOPC curves are scored too; their points that the beam already
    scored are not run again: at least every ordering's first point (a leave-one-out row, the beam's first step) and
    the empty input (its last step). The AOPCs are the curve engine's (``evaluate_orders``)."""
    clf = random_classifier
    encoding = clf.encode(TEXTS[-1])
    n = encoding.n_words
    orders = np.vstack([np.arange(n), np.arange(n)[::-1], random_orders(n, 6, 2)])
    engine = evaluate_orders(clf, encoding, list(naopc_bounds.METRICS), orders, RemovalOptions())
    with metered() as curves_alone:
        evaluate_orders(clf, encoding, list(naopc_bounds.METRICS), orders, RemovalOptions())
    target = int(np.argmax(base_logits(clf, encoding)))
    naopc_bounds._cache.clear()
    with metered() as bounds_alone:
        naopc_bounds.aopc_bounds(clf, encoding, RemovalOptions(), naopc_bounds.NaopcOptions(), target)
    naopc_bounds._cache.clear()
    with metered() as both:
        scored, bounds = naopc.score_orders(clf, encoding, orders, {})
    assert bounds.search == naopc_bounds.BEAM
    shared = len({int(o[0]) for o in orders} | {int(o[-1]) for o in orders}) + 1  # leave-one-out rows + empty
    assert both.forward_passes <= bounds_alone.forward_passes + curves_alone.forward_passes - shared
    for values, reference in zip(scored, engine):
        for metric in naopc_bounds.METRICS:
            assert values.details[metric.id]["aopc"] == pytest.approx(reference.values[metric.id],
                                                                      abs=float32_tolerance(1.0))


# ----- in a dataset run ----------------------------------------------------------------------------------------
OPTIONS = {"random_orderings": 3, "naopc_exact_words": 5}  # the keyword sentences have 3-9 words: both searches


@pytest.fixture()
def model_and_data(keyword_classifier, tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "DEFAULT_CACHE", None)  # every explanation computed, in both runs
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    return folder, write_keyword_csv(tmp_path / "data.csv", 8, seed=5)


def fresh(folder) -> None:
    """Forget every memo a first run left: the second one computes its clean passes and bounds again."""
    naopc_bounds._cache.clear()
    cached_classifier(folder)._logits_cache.clear()
    from evaluation.faithfulness import curves

    curves._base_cache.clear()


def test_a_run_stores_the_values_of_cells_searching_alone(model_and_data, tmp_path):
    """The batch hook's lockstep search leaves the bounds the cells read: the stored NAOPC values are those of
    cells that search their own bounds, the same sequences go through the model (the cells search nothing again),
    in fewer batches."""
    folder, dataset = model_and_data
    evaluators = ["naopc", "naopc-edin-beam-5"]
    _store, _run, cells = start_evaluation(folder, dataset, ["saliency"], evaluators, None, OPTIONS,
                                           ResultStore(tmp_path / "alone.sqlite"))
    fresh(folder)
    with metered() as alone_meter:
        alone = {cell.key: evaluate_example(cell.spec) for cell in cells}  # no hook: each cell its own search
    fresh(folder)
    with metered() as run_meter:
        store, summary = run_evaluation(folder, dataset, ["saliency"], evaluators, None, OPTIONS,
                                        ResultStore(tmp_path / "run.sqlite"))
    assert summary.status == "finished" and summary.done == 8, summary.errors
    lengths = {result["n_words"] for result in alone.values()}
    assert min(lengths) <= 5 < max(lengths)  # exact and beam searches both ran
    frame = results_frame(store, summary.run_id).set_index(["example_id", "method", "metric"])["value"]
    classifier = cached_classifier(folder)
    examples = {example.id: example for example in load_dataset(dataset, label_names=classifier.labels)}
    tight = 0
    for key, result in alone.items():
        encoding = classifier.encode(examples[key].text)
        for row in result["rows"]:
            base = row["metric"].split("[")[0]  # naopc-comprehensiveness[edin-beam-5] -> its preset's metric
            preset = next(p for p in naopc.PRESETS if p.metric_id(base) == row["metric"])
            options = preset.options(OPTIONS)
            target = int(np.argmax(base_logits(classifier, encoding)))
            low, high = naopc_bounds.aopc_bounds(classifier, encoding, options_from(RemovalOptions, options),
                                          options_from(naopc_bounds.NaopcOptions, options), target).values[base]
            # NAOPC = (AOPC - min) / (max - min): float32 noise of the AOPC sums divided by the spread (an input
            # whose orderings all give the same AOPC, a sure negative of the keyword model, has only noise)
            tolerance = float32_tolerance(1.0) / max(high - low, 1e-12)
            assert frame.loc[(key, row["method"], row["metric"])] == pytest.approx(row["value"], abs=tolerance,
                                                                                  nan_ok=True), row
            tight += tolerance < 1e-3
    assert tight >= 2 * 2 * 3  # positive examples: their values compared to 1e-3 or closer
    assert run_meter.forward_passes == alone_meter.forward_passes
    assert run_meter.batches < alone_meter.batches


def test_a_failing_prefill_only_loses_the_speed_up(model_and_data, tmp_path, monkeypatch):
    folder, dataset = model_and_data
    calls = []

    def broken(*args, **kwargs):
        calls.append(len(args[1]))
        raise RuntimeError("no lockstep today")

    monkeypatch.setattr(naopc, "prefill_bounds", broken)
    fresh(folder)
    store, summary = run_evaluation(folder, dataset, ["saliency"], ["naopc"], None, OPTIONS,
                                    ResultStore(tmp_path / "broken.sqlite"))
    assert summary.status == "finished" and summary.done == 8 and not summary.errors
    assert calls == [8]  # the hook asked for the window's 8 inputs, then the cells searched their own bounds


def test_near_tied_partial_sums_keep_the_candidates_order():
    """Two batchings of the same rows differ by float32 rounding; a beam must not follow that noise (a word the model
    ignores ties exactly), so sums equal to ``TIE_DECIMALS`` decimals go by candidate order, and larger gaps count."""
    def best_first_pick(scores):
        beams = naopc_bounds.Beams(3, start=1.0, width=1)
        beams.candidates()  # removing word 0, 1 or 2 (both beams)
        beams.advance(np.array(scores * 2), np.ones((6, 3), bool), np.zeros((6, 2)))
        return int(np.flatnonzero(beams.beams[1.0][0][1])[0])

    noise = 10.0 ** -(naopc_bounds.TIE_DECIMALS + 3)
    assert best_first_pick([0.5, 0.5 - noise, 0.9]) == 0  # word 1 removes "more" by rounding noise only
    assert best_first_pick([0.5, 0.5 - 10.0 ** -naopc_bounds.TIE_DECIMALS, 0.9]) == 1  # a real gap decides
