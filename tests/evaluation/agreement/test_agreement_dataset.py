"""Agreement between methods as a metric group: Krishna et al.'s measures by hand, the correlations
against scipy, the dataset run's pair rows against per-example ``agreement_matrix`` values, the random band against
a direct computation, and the command line (listing, running, export)."""
from __future__ import annotations

import csv
import itertools
import json

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv
from scipy.stats import kendalltau, pearsonr, spearmanr

import cli
from evaluation.agreement import dataset as AD
from evaluation.agreement.measures import agreement_matrix
from evaluation.baselines import orderings_seed
from evaluation.metric import EVALUATORS, RANDOM_METHOD
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import random_orderings_frame, results_frame
from explainers import Explanation

A = [0.9, -0.5, 0.1, 0.3]   # |A| ranks words 0 > 1 > 3 > 2
B = [0.2, -0.8, 0.4, -0.1]  # |B| ranks words 1 > 2 > 0 > 3
C = [0.8, -0.6, 0.05, -0.2]  # |C| ranks like |A|; word 3 has the other sign
METHODS = ["leave_one_out", "saliency", "input_x_gradient"]


def record(method_id, scores, words=None):
    words = tuple(words or (f"w{i}" for i in range(len(scores))))
    n = len(words)
    return Explanation(method_id=method_id, method_label=method_id, family="test", signed=True,
                       tokens=("[CLS]",) + words + ("[SEP]",), token_word=(-1,) + tuple(range(n)) + (-1,),
                       words=words, word_segment=(0,) * n, word_scores=np.asarray(scores, dtype=np.float64),
                       token_scores=None, target=1, target_label="positive", provenance={})


@pytest.mark.parametrize("other, expected", [
    # top-3 of A {0, 1, 3} vs B {1, 2, 0}: two shared words, no rank alike, both shared words agree in sign;
    # pairs (0,1) (0,2) (2,3) are ordered differently, (0,3) (1,2) (1,3) alike
    (B, {"feature": 2 / 3, "rank": 0.0, "sign": 2 / 3, "signed-rank": 0.0, "pairwise-rank": 3 / 6}),
    # the same top-3 at the same ranks; word 3 (rank 3) differs in sign
    (C, {"feature": 1.0, "rank": 1.0, "sign": 2 / 3, "signed-rank": 2 / 3, "pairwise-rank": 1.0}),
])
def test_krishna_measures_by_hand_through_the_group(other, expected):
    values = AD.pair_values({"a": record("a", A), "b": record("b", other)}, k=3)["a vs b"]
    for measure, value in expected.items():
        assert values[AD.metric_id(measure)] == pytest.approx(value, abs=1e-12), measure


def test_correlations_equal_scipy():
    rng = np.random.default_rng(4)
    vectors = {f"m{i}": rng.normal(size=11) for i in range(3)}
    for absolute in (True, False):
        pairs = AD.pair_values({name: record(name, v) for name, v in vectors.items()}, absolute=absolute)
        for a, b in itertools.combinations(vectors, 2):
            x, y = (np.abs(vectors[a]), np.abs(vectors[b])) if absolute else (vectors[a], vectors[b])
            values = pairs[AD.pair_name(a, b)]
            assert values["agreement-pearson"] == pytest.approx(pearsonr(x, y)[0], abs=1e-12)
            assert values["agreement-spearman"] == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
            assert values["agreement-kendall"] == pytest.approx(kendalltau(x, y)[0], abs=1e-12)


def test_partner_means_and_undefined_values():
    pairs = AD.pair_values({"a": record("a", A), "b": record("b", B), "flat": record("flat", [1.0] * 4)}, k=3)
    assert "agreement-spearman" not in pairs["a vs flat"]  # constant scores: no correlation, left out
    means = AD.partner_means(pairs, ["a", "b", "flat"])
    assert means["a"]["agreement-spearman"] == pairs["a vs b"]["agreement-spearman"]  # flat has none
    assert means["a"]["agreement-feature"] == pytest.approx(
        (pairs["a vs b"]["agreement-feature"] + pairs["a vs flat"]["agreement-feature"]) / 2)
    assert AD.split_pair("a vs b") == ("a", "b") and AD.split_pair("lime:paper-000") is None


def test_the_random_band_is_two_independent_random_attributions():
    class Encoding:  # what random_values reads of an encoding
        key, n_words = "some input", 8
        tokens, token_word = ("[CLS]",) + ("w",) * 8 + ("[SEP]",), (-1,) + tuple(range(8)) + (-1,)
        words, word_segment = ("w",) * 8, (0,) * 8

    values = AD.random_values(Encoding, n=12, seed=3, k=3)
    rng = np.random.default_rng(orderings_seed(3, "agreement:some input"))
    for draw in range(12):
        x, y = np.abs(rng.standard_normal(8)), np.abs(rng.standard_normal(8))
        top_x, top_y = set(np.argsort(-x)[:3]), set(np.argsort(-y)[:3])
        assert values["agreement-feature"][draw] == pytest.approx(len(top_x & top_y) / 3)
        assert values["agreement-spearman"][draw] == pytest.approx(spearmanr(x, y)[0], abs=1e-12)
    # chance feature agreement of top-3 of 8 words is k / n = 3 / 8
    many = AD.random_values(Encoding, n=400, seed=0, k=3)
    assert np.mean(many["agreement-feature"]) == pytest.approx(3 / 8, abs=0.05)


def test_a_dataset_run_keeps_the_pair_table_with_intervals_and_the_random_band(keyword_classifier, tmp_path,
                                                                              monkeypatch):
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "explanations")
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = write_keyword_csv(tmp_path / "test.csv", 6, seed=5)
    store, summary = run_evaluation(folder, data, METHODS, ["agreement"], limit=0,
                                    options={"seed": 0, "random_orderings": 10, "agreement_k": 3},
                                    store=ResultStore(tmp_path / "r.db"))
    assert summary.status == "finished" and summary.done == 6, summary.errors
    table = run_table(store, summary.run_id)
    pairs = AD.pair_table(table)
    assert set(zip(pairs["method A"], pairs["method B"])) == set(itertools.combinations(METHODS, 2))
    # the per-pair mean is the mean of the per-example agreement_matrix values on the stored explanations
    direct: dict = {}
    for cell in store.cells(summary.run_id).values():
        stored = cell["explanations"]
        records = [record(m, stored[m]["scores"], stored[m]["words"]) for m in METHODS]
        for measure in AD.ORDER:
            matrix = agreement_matrix(records, measure, absolute=True, k=3).matrix
            for (i, a), (j, b) in itertools.combinations(enumerate(METHODS), 2):
                direct.setdefault((measure, a, b), []).append(matrix[i, j])
    for row in pairs.to_dict("records"):
        values = np.asarray(direct[(row["measure"], row["method A"], row["method B"])])
        assert row["mean"] == pytest.approx(np.nanmean(values), rel=1e-9, abs=1e-12), (row["measure"], row["method"])
        assert row["low"] <= row["mean"] <= row["high"] and np.isfinite(row["random_mean"])
    # a method's own row: the mean over examples of its mean over partners
    frame = results_frame(store, summary.run_id)
    spearman = frame[frame["metric"] == "agreement-spearman"].pivot(index="example_id", columns="method",
                                                                     values="value")
    partners = [AD.pair_name(*p) for p in itertools.combinations(METHODS, 2) if "saliency" in p]
    assert np.allclose(spearman["saliency"], spearman[partners].mean(axis=1), rtol=1e-12)
    # the random rows are the random band's draws of each example, recomputed directly
    from corpora import load_dataset

    example = load_dataset(data)[0]
    encoding = keyword_classifier.encode(example.text)
    draws = random_orderings_frame(store, summary.run_id)
    mine = draws[(draws["example_id"] == example.id) & (draws["metric"] == "agreement-rank")]["value"].to_numpy()
    assert np.allclose(mine, AD.random_values(encoding, 10, 0, k=3)["agreement-rank"], equal_nan=True)
    random_row = table[(table["method"] == RANDOM_METHOD) & (table["metric"] == "agreement-feature")].iloc[0]
    assert random_row["random_low"] <= random_row["mean"] <= random_row["random_high"]
    exported = json.dumps(store.export_run(summary.run_id), default=str)
    assert "agreement-signed-rank" in exported and "saliency vs input_x_gradient" in exported
    assert list(AD.without_pairs(table)["method"].unique()) == [*METHODS, RANDOM_METHOD]
    matrix = AD.mean_matrix(pairs, "feature", METHODS)
    first = pairs[(pairs["measure"] == "feature") & (pairs["method A"] == METHODS[0])
                  & (pairs["method B"] == METHODS[2])]["mean"].iloc[0]
    assert matrix[0, 2] == matrix[2, 0] == first and matrix[1, 1] == 1.0


def test_a_run_of_one_method_has_no_agreement(keyword_classifier, tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = write_keyword_csv(tmp_path / "test.csv", 2, seed=1)
    store, summary = run_evaluation(folder, data, ["saliency"], ["agreement", "shape"], limit=0,
                                    options={"random_orderings": 10}, store=ResultStore(tmp_path / "r.db"))
    assert summary.status == "finished", summary.errors
    metrics = set(results_frame(store, summary.run_id)["metric"])
    assert metrics and not any(AD.is_agreement(m) for m in metrics)  # shape is there, agreement is not


def test_the_command_line_lists_runs_and_exports_the_group(keyword_classifier, tmp_path, monkeypatch, capsys):
    assert cli.main(["evaluate", "--list-metrics"]) == 0
    listed = capsys.readouterr().out
    assert "agreement: Agreement between methods" in listed
    for metric in EVALUATORS["agreement"].metrics:
        assert f"    {metric.id} ↑" in listed
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    data = write_keyword_csv(tmp_path / "test.csv", 4, seed=2)
    out = tmp_path / "summary.csv"
    args = ["evaluate", "--model", folder, "--dataset", data, "--methods", "saliency,leave_one_out", "--metrics",
            "agreement", "--limit", "0", "--random-orderings", "10", "--agreement-k", "2"]
    assert cli.main([*args, "--out", str(out)]) == 0
    with open(out) as handle:
        rows = {r["metric"]: r for r in csv.DictReader(handle) if r["method"] == "saliency vs leave_one_out"}
    assert set(rows) == {m.id for m in EVALUATORS["agreement"].metrics}
    assert all(r["random_mean"] != "" and int(r["n"]) == 4 and r["agreement_k"] == "2" for r in rows.values())
    assert rows["agreement-feature"]["agreement_ranking"] == "magnitude"
    exported = tmp_path / "run.json"
    assert cli.main([*args, "--out", str(exported)]) == 0
    saved = json.loads(exported.read_text())
    assert "2202.01602" in saved["metrics"]["agreement-rank"]["reference"]
    assert saved["run"]["config"]["options"]["agreement_k"] == 2
    assert cli.main([*args[:-1], "0"]) == 2  # k below 1: a one-line message
    assert "agreement" in capsys.readouterr().err.lower()
