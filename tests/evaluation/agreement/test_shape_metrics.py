"""The shape measures (complexity, Gini, top-10 share) as a metric group: each value against an
independent computation, and the group in a dataset run (intervals, random band, export) and in `--list-metrics`."""
from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv
from scipy.stats import entropy

import cli
from evaluation.agreement import measures as agreement
from evaluation.metric import RANDOM_METHOD
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import results_frame
from explainers import create

SCORES = np.array([0.5, -2.0, 0.0, 1.0, 0.25, -0.25, 3.0, 0.1, 0.2, -0.3, 0.05, 0.7])


def gini_by_mean_difference(values) -> float:
    """Gini as half the relative mean absolute difference over all ordered pairs (a formula without sorting)."""
    values = np.abs(np.asarray(values, dtype=np.float64))
    pairs = sum(abs(a - b) for a, b in itertools.product(values, repeat=2))
    return pairs / (2 * len(values) ** 2 * values.mean())


def test_each_shape_value_against_an_independent_computation():
    values = agreement.compute_shape(None, None, type("E", (), {"word_scores": SCORES})(), None, {})
    magnitude = np.abs(SCORES)
    assert values["shape-complexity"] == pytest.approx(entropy(magnitude) / np.log(len(SCORES)), rel=1e-12)
    assert values["shape-gini"] == pytest.approx(gini_by_mean_difference(SCORES), rel=1e-12)
    top_10 = sum(sorted(magnitude, reverse=True)[:10]) / magnitude.sum()
    assert values["shape-top-10-share"] == pytest.approx(top_10, rel=1e-12)
    # the extremes: one word holds everything; every word equal
    one = agreement.compute_shape(None, None, type("E", (), {"word_scores": np.eye(1, 12)[0]})(), None, {})
    assert (one["shape-complexity"], one["shape-gini"]) == (pytest.approx(0.0), pytest.approx(11 / 12))
    flat = agreement.compute_shape(None, None, type("E", (), {"word_scores": np.ones(12)})(), None, {})
    assert (flat["shape-complexity"], flat["shape-gini"]) == (pytest.approx(1.0), pytest.approx(0.0))
    # all zero: undefined, left out rather than stored as NaN
    assert agreement.compute_shape(None, None, type("E", (), {"word_scores": np.zeros(5)})(), None, {}) == {}


def test_the_group_is_listed(capsys):
    assert cli.main(["evaluate", "--list-metrics"]) == 0
    out = capsys.readouterr().out
    assert "shape: Shape of an explanation" in out
    for metric in ("shape-complexity ↓", "shape-gini ↑", "shape-top-10-share ↑"):
        assert metric in out
    sanity_section = out.split("\nsanity: ", 1)[1]
    assert "shape-gini" not in sanity_section  # listed once, with its group


def test_a_dataset_run_has_intervals_the_random_band_and_exports(keyword_classifier, tmp_path, monkeypatch):
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "explanations")
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = write_keyword_csv(tmp_path / "test.csv", 6, seed=5)
    store, summary = run_evaluation(folder, data, ["leave_one_out", "random"], ["shape"], limit=0,
                                    options={"seed": 0, "random_orderings": 10}, store=ResultStore(tmp_path / "r.db"))
    assert summary.status == "finished" and summary.done == 6, summary.errors
    table = run_table(store, summary.run_id)
    for metric in ("shape-complexity", "shape-gini", "shape-top-10-share"):
        rows = table[table["metric"] == metric].set_index("method")
        assert {"leave_one_out", RANDOM_METHOD} <= set(rows.index), metric
        assert rows.loc["leave_one_out", "low"] <= rows.loc["leave_one_out", "mean"] <= rows.loc["leave_one_out", "high"]
    # every stored value is the direct computation on the method's own explanation
    frame = results_frame(store, summary.run_id)
    from corpora import load_dataset
    example = load_dataset(data)[0]
    encoding = keyword_classifier.encode(example.text)
    direct = agreement.compute_shape(None, encoding, create("leave_one_out").explain(keyword_classifier, encoding),
                                     example, {})
    stored = frame[(frame["example_id"] == example.id) & (frame["method"] == "leave_one_out")].set_index("metric")
    for metric, value in direct.items():
        assert stored.loc[metric, "value"] == pytest.approx(value, rel=1e-9, abs=1e-12), metric
    exported = json.dumps(store.export_run(summary.run_id), default=str)
    assert "shape-gini" in exported and "shape-top-10-share" in exported


def test_the_command_line_writes_the_group(keyword_classifier, tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = write_keyword_csv(tmp_path / "test.csv", 5, seed=2)
    out = tmp_path / "summary.csv"
    assert cli.main(["evaluate", "--model", folder, "--dataset", data, "--methods", "saliency", "--metrics", "shape",
                     "--limit", "0", "--random-orderings", "10", "--out", str(out)]) == 0
    with open(out) as handle:
        rows = {r["metric"]: r for r in csv.DictReader(handle) if r["method"] == "saliency"}
    assert set(rows) == {"shape-complexity", "shape-gini", "shape-top-10-share"}
    assert all(row["random_mean"] != "" and int(row["n"]) == 5 for row in rows.values())
    exported = tmp_path / "run.json"  # the JSON export carries each metric's metadata
    assert cli.main(["evaluate", "--model", folder, "--dataset", data, "--methods", "saliency", "--metrics", "shape",
                     "--limit", "0", "--random-orderings", "10", "--out", str(exported)]) == 0
    metrics = json.loads(exported.read_text())["metrics"]
    assert metrics["shape-gini"]["reference"] == agreement.SHAPE_REFERENCE
    assert metrics["shape-complexity"]["higher_is_better"] is False
