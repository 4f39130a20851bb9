"""Dataset-level faithfulness on the real quick model: per-example values equal the direct computation, the
random baseline and curves are stored, a finished run reopens without recomputing, and `cli.py evaluate`."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from tolerances import float32_tolerance

from corpora import load_dataset
from evaluation.faithfulness.bias import SWEEP_METRICS, sweep_values
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from evaluation.metric import RANDOM_METHOD
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import curve_metrics, dataset_curves, run_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import random_orderings_frame, results_frame

pytestmark = pytest.mark.integration
METHODS = ["saliency", "leave_one_out"]


@pytest.fixture(scope="module")
def run(quick_classifier, tmp_path_factory):
    """One small run for the module, in its own cache and result store."""
    from explainers.cache import DEFAULT_CACHE

    tmp = tmp_path_factory.mktemp("faith-run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(tmp / "cache"))
        patch.setattr(DEFAULT_CACHE, "directory", tmp / "explanations")
        store = ResultStore(tmp / "results.sqlite")
        store, summary = run_evaluation(MODEL(quick_classifier), "sst2:dev", METHODS, ["eraser", "operator-sweep"],
                                        limit=3, options={"seed": 0, "random_orderings": 10}, store=store)
        assert summary.status == "finished" and summary.done == 3, summary.errors
        yield store, summary


def MODEL(classifier) -> str:
    return str(classifier.source)  # the prepared folder: loadable while the cache directory is isolated


def test_per_example_values_equal_the_direct_computation(run, quick_classifier):
    from explainers import create

    store, summary = run
    frame = results_frame(store, summary.run_id)
    example = load_dataset("sst2:dev", limit=1)[0]
    encoding = quick_classifier.encode(example.text)
    metrics = [BY_ID["comprehensiveness-eraser"], BY_ID["sufficiency-eraser"]]
    for method in METHODS:
        explanation = create(method).explain(quick_classifier, encoding)
        direct = evaluate_scores(quick_classifier, encoding, metrics, explanation.word_scores, RemovalOptions())
        stored = frame[(frame["example_id"] == example.id) & (frame["method"] == method)].set_index("metric")["value"]
        for metric in metrics:
            # batched with other methods and the random orderings: padding differs, float32 noise only
            assert stored[metric.id] == pytest.approx(direct.values[metric.id], abs=float32_tolerance(1.0))
    orderings = random_orderings_frame(store, summary.run_id)
    counts = orderings.groupby(["example_id", "metric"])["ordering"].count()
    assert (counts == 10).all() and len(counts) == 3 * (2 + len(SWEEP_METRICS) - 1)  # no MLM column offline
    means = orderings.groupby(["example_id", "metric"])["value"].mean()
    random_rows = frame[frame["method"] == RANDOM_METHOD].set_index(["example_id", "metric"])["value"]
    assert np.allclose(random_rows.loc[means.index].to_numpy(), means.to_numpy())


def test_table_curves_and_bias_values(run):
    store, summary = run
    table = run_table(store, summary.run_id)
    rows = table[table["metric"] == "comprehensiveness-eraser"].set_index("method")
    assert set(rows.index) == set(METHODS) | {RANDOM_METHOD}
    assert rows.loc["leave_one_out", "vs_random"] in ("better than random", "worse than random",
                                                      "not distinguishable from random")
    assert rows.loc["leave_one_out", "low"] <= rows.loc["leave_one_out", "mean"] <= rows.loc["leave_one_out", "high"]
    assert rows.loc["leave_one_out", "preset"] == "eraser" and rows.loc["leave_one_out", "operator"] == "delete"
    assert "comprehensiveness-eraser" in curve_metrics(store, summary.run_id)
    curves = dataset_curves(store, summary.run_id, "comprehensiveness-eraser")
    assert curves["x"] == [0.01, 0.05, 0.1, 0.2, 0.5]
    assert curves["methods"]["saliency"]["n"] == 3 and curves["random"]["orderings"] == 10
    deletion = dataset_curves(store, summary.run_id, SWEEP_METRICS["mask"].id)
    assert len(deletion["x"]) == 11  # step curves go on a common grid
    values = sweep_values(results_frame(store, summary.run_id), METHODS)
    assert list(values.index) == METHODS and "delete" in values.columns and "mlm" not in values.columns


def test_a_finished_run_reopens_without_recomputing(run, quick_classifier):
    store, summary = run
    before = {c["key"]: c["finished"] for c in store.export_run(summary.run_id)["cells"]}
    seen = []
    store, again = run_evaluation(MODEL(quick_classifier), "sst2:dev", METHODS, ["eraser", "operator-sweep"],
                                  limit=3, options={"seed": 0, "random_orderings": 10}, store=store,
                                  progress=lambda done, total, eta: seen.append(done))
    assert again.run_id == summary.run_id and seen == [3]
    assert {c["key"]: c["finished"] for c in store.export_run(summary.run_id)["cells"]} == before


def test_cli_evaluate_writes_the_summary(quick_classifier, isolated_cache, tmp_path, capsys, monkeypatch):
    from cli import main
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "explanations")
    out = tmp_path / "results.csv"
    code = main(["evaluate", "--model", MODEL(quick_classifier), "--dataset", "sst2:dev", "--limit", "2", "--methods",
                 "leave_one_out,saliency:paper-003", "--metrics", "deletion-auc,log-odds-004", "--operator", "unk",
                 "--out", str(out), "--per-example", str(tmp_path / "each.csv")])
    assert code == 0
    rows = list(csv.DictReader(out.open()))
    assert {r["metric"] for r in rows} == {"deletion-auc", "comprehensiveness-004", "sufficiency-004", "log-odds-004"}
    assert {r["method"] for r in rows} == {"leave_one_out", "saliency:paper-003", RANDOM_METHOD}
    assert {r["operator"] for r in rows} == {"[UNK]"} and {r["target"] for r in rows} == {"predicted"}
    assert "Deletion AUC ↓" in capsys.readouterr().out
    per_example = list(csv.DictReader((tmp_path / "each.csv").open()))
    assert len({r["example_id"] for r in per_example}) == 2
    js = tmp_path / "results.json"
    assert main(["evaluate", "--model", MODEL(quick_classifier), "--limit", "2", "--methods", "leave_one_out",
                 "--metrics", "deletion", "--out", str(js)]) == 0
    data = json.loads(js.read_text())
    assert data["metrics"]["deletion-auc"]["operator"] == "delete" and len(data["random_orderings"]) == 20


@pytest.mark.parametrize("argv, message", [
    (["--metrics", "nonsense"], "Unknown metric"),
    (["--methods", "nope"], "Unknown method"),
    (["--methods", "saliency:nope"], "Unknown preset"),
    (["--random-orderings", "3"], "at least 10"),
    (["--dataset", "nodata:dev"], "Unknown dataset"),
    (["--metrics", "known-feature"], "No metric applied"),
])
def test_cli_errors_are_one_line_messages(argv, message, quick_classifier, isolated_cache, capsys):
    from cli import main

    code = main(["evaluate", "--model", MODEL(quick_classifier), "--limit", "2", "--methods", "saliency"] + argv)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
