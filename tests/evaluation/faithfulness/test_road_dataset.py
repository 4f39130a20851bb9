"""ROAD for text in a dataset run on the real quick model with the prepared masked LM: intervals, the
random baseline, export, and each stored value equal to the one-input computation of the same curves."""
from __future__ import annotations

import json

import pytest
from tolerances import float32_tolerance

from corpora import load_dataset
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from evaluation.metric import RANDOM_METHOD
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import results_frame

pytestmark = pytest.mark.integration


def test_road_in_a_dataset_run_equals_the_one_input_curves(quick_classifier, tmp_path, monkeypatch):
    from explainers import create
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(models_dir(), target_is_directory=True)  # the prepared masked LM
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "explanations")
    store, summary = run_evaluation(str(quick_classifier.source), "sst2:dev", ["saliency"], ["road"], limit=2,
                                    options={"seed": 0, "random_orderings": 10}, store=ResultStore(tmp_path / "r.db"))
    assert summary.status == "finished" and summary.done == 2, summary.errors
    table = run_table(store, summary.run_id)
    for metric in ("road-morf", "road-lerf"):
        rows = table[table["metric"] == metric].set_index("method")
        assert {"saliency", RANDOM_METHOD} <= set(rows.index), metric
        assert rows.loc["saliency", "low"] <= rows.loc["saliency", "mean"] <= rows.loc["saliency", "high"]
        assert rows.loc["saliency", "random_low"] <= rows.loc["saliency", "random_high"]
    example = load_dataset("sst2:dev", limit=1)[0]
    encoding = quick_classifier.encode(example.text)
    explanation = create("saliency").explain(quick_classifier, encoding)
    direct = evaluate_scores(quick_classifier, encoding, [BY_ID["road-morf"], BY_ID["road-lerf"]],
                             explanation.word_scores, RemovalOptions(seed=0), example, explanation).values
    stored = results_frame(store, summary.run_id)
    stored = stored[(stored["example_id"] == example.id) & (stored["method"] == "saliency")].set_index("metric")
    for metric in ("road-morf", "road-lerf"):
        # probabilities of float32 logits, batched with other rows (tests/tolerances.py)
        assert stored.loc[metric, "value"] == pytest.approx(direct[metric], abs=10 * float32_tolerance(1.0)), metric
    exported = json.dumps(store.export_run(summary.run_id), default=str)
    assert "road-morf" in exported and "road-lerf" in exported
