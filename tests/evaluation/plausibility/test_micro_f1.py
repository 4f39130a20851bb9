"""Micro F1 beside macro F1 (paper 004 Table 3): pooled token decisions against scikit-learn's micro
average over documents x words indicator rows, macro against its per-sample average, and on a real run the macro
column equals the run's own mean token F1 at top-k."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import f1_score, precision_score, recall_score
from test_plausibility_dataset import _keyword_file, keyword_folder  # noqa: F401 (the fixture)

from evaluation.plausibility.dataset import metric_table, micro_macro_report
from evaluation.plausibility.metrics import PlausibilityConfig
from evaluation.plausibility.micro_f1 import micro_macro_table, micro_scores, top_k_selections
from evaluation.runs.store import ResultStore
from evaluation.suite.plausibility_run import run_plausibility
from evaluation.summary import results_frame


def padded(rows: list[np.ndarray]) -> np.ndarray:
    """Documents x words indicator matrix (shorter documents padded with 0: neither selected nor human)."""
    out = np.zeros((len(rows), max(len(r) for r in rows)), dtype=int)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out


def test_micro_scores_equal_scikit_learns_micro_average():
    rng = np.random.default_rng(0)
    for _ in range(20):
        lengths = rng.integers(3, 40, size=rng.integers(2, 8))
        humans = [rng.random(n) < 0.3 for n in lengths]
        selections = [rng.random(n) < 0.4 for n in lengths]
        ours = micro_scores(selections, humans)
        truth, predicted = padded(humans), padded(selections)
        assert ours["f1"] == pytest.approx(f1_score(truth, predicted, average="micro", zero_division=0))
        assert ours["precision"] == pytest.approx(precision_score(truth, predicted, average="micro", zero_division=0))
        assert ours["recall"] == pytest.approx(recall_score(truth, predicted, average="micro", zero_division=0))


def test_macro_and_micro_of_top_25_against_scikit_learn():
    rng = np.random.default_rng(1)
    documents = {f"d{i}": (rng.normal(size=n), rng.random(n) < 0.25) for i, n in enumerate((30, 60, 12, 200, 45))}
    documents = {key: (s, h | (np.arange(h.size) == 0)) for key, (s, h) in documents.items()}  # a human word each
    config = PlausibilityConfig(top_k="25")
    row = micro_macro_table({"m": documents}, config, resamples=200).iloc[0]
    selections, humans = top_k_selections(documents, config)
    truth, predicted = padded(humans), padded(selections)
    assert row["micro_f1"] == pytest.approx(f1_score(truth, predicted, average="micro"))
    assert row["macro_f1"] == pytest.approx(f1_score(truth, predicted, average="samples", zero_division=1.0))
    assert row["micro_f1_low"] <= row["micro_f1"] <= row["micro_f1_high"]
    assert all(int(s.sum()) <= 25 for s in selections)


def test_a_run_reports_micro_beside_its_own_macro(keyword_folder, tmp_path, isolated_cache):  # noqa: F811
    data = _keyword_file(tmp_path / "keyword.jsonl")
    store = ResultStore(tmp_path / "results.sqlite")
    store, run_id, _ = run_plausibility(keyword_folder, f"file:{data}", ["leave_one_out"], store=store,
                                        options={"random_orderings": 2, "plausibility_top_k": "25"})
    table = micro_macro_report(store, run_id).set_index("method")
    means = metric_table(results_frame(store, run_id)).set_index(["method", "metric"])
    assert table.loc["leave_one_out", "macro_f1"] == pytest.approx(
        means.loc[("leave_one_out", "plaus_token_f1_topk"), "mean"])
    assert 0 <= table.loc["leave_one_out", "micro_f1"] <= 1 and table.loc["leave_one_out", "n"] == 8
