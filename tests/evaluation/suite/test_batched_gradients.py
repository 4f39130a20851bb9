"""A dataset run computes the IG paths of several sentences per batch (its batch hook) and stores the
same scores, to float32 precision, as cells run one at a time."""
from __future__ import annotations

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv
from tolerances import float32_tolerance

from evaluation.runs import jobs
from evaluation.runs.store import ResultStore
from evaluation.suite.runner import evaluate_example, run_evaluation, start_evaluation
from explainers import cache as cache_module
from models import cached_classifier
from models.metering import metered

METHODS = ["integrated_gradients", "saliency"]


@pytest.fixture()
def model_and_data(keyword_classifier, tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "DEFAULT_CACHE", None)  # every explanation computed, in both runs
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    return folder, write_keyword_csv(tmp_path / "data.csv", 6, seed=3)


def test_batched_run_equals_cells_one_at_a_time(model_and_data, tmp_path):
    folder, dataset = model_and_data
    options = {"random_orderings": 0}
    _store, _run, cells = start_evaluation(folder, dataset, METHODS, ["eraser"], None, options,
                                           ResultStore(tmp_path / "alone.sqlite"))
    with metered() as alone_meter:
        alone = [evaluate_example(cell.spec) for cell in cells]  # no hook: one path per cell
    cached_classifier(folder)._logits_cache.clear()  # the prediction is computed again, as in the first run
    with metered() as batched_meter:
        store, summary = run_evaluation(folder, dataset, METHODS, ["eraser"], None, options,
                                        ResultStore(tmp_path / "batched.sqlite"))
    assert summary.status == "finished" and summary.done == 6
    batched = store.cells(summary.run_id)
    for cell, one in zip(cells, alone):
        scores = np.array(batched[cell.key]["explanations"]["integrated_gradients"]["scores"])
        expected = np.array(one["explanations"]["integrated_gradients"]["scores"])
        np.testing.assert_allclose(scores, expected, rtol=0, atol=float32_tolerance(np.abs(expected).sum() + 1.0))
    # the same sequences through the model, in fewer batches: six IG paths in shared forwards
    assert batched_meter.forward_passes == alone_meter.forward_passes
    assert batched_meter.batches < alone_meter.batches - 6


def test_the_hook_is_entered_per_window_and_a_stop_before_it_runs_nothing(model_and_data, tmp_path, monkeypatch):
    folder, dataset = model_and_data
    monkeypatch.setattr(jobs, "BATCH_WINDOW", 4)
    windows = []

    from contextlib import nullcontext

    def hook(specs):
        windows.append([s["index"] for s in specs])
        return nullcontext()

    store, run_id, cells = start_evaluation(folder, dataset, ["saliency"], ["eraser"], None,
                                            {"random_orderings": 0}, ResultStore(tmp_path / "w.sqlite"))
    summary = jobs.run_cells(store, run_id, cells, evaluate_example, batch_hook=hook)
    assert windows == [[0, 1, 2, 3], [4, 5]] and summary.done == 6
    windows.clear()
    store2, run2, cells2 = start_evaluation(folder, dataset, ["saliency"], ["eraser"], None,
                                            {"random_orderings": 0}, ResultStore(tmp_path / "s.sqlite"))
    summary = jobs.run_cells(store2, run2, cells2, evaluate_example, batch_hook=hook, should_stop=lambda: True)
    assert windows == [] and summary.status == "cancelled" and summary.done == 0


def test_a_served_explanation_counts_its_share_of_the_batch(keyword_classifier):
    from evaluation.suite.runner import _seconds
    from explainers import create
    from explainers.shared_passes import prefill_ig_paths, sharing

    encodings = [keyword_classifier.encode(t) for t in ("the movie was excellent", "a film was dull", "it is so long")]
    assert len({e.n_tokens for e in encodings}) == 1  # one group
    explainer = create("integrated_gradients", n_steps=10)
    with sharing():
        prefill_ig_paths(keyword_classifier, encodings, [1, 1, 1], [explainer])
        served = explainer.explain(keyword_classifier, encodings[0], 1)
    batch = served.provenance["details"]["path_computed_in_batch"]
    assert batch["inputs"] == 3 and served.provenance["forward_passes"] == 0
    assert _seconds(served) == round(served.provenance["seconds"] + batch["seconds"] / 3, 4)
