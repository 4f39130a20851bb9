"""The newer measures in a dataset run on the real quick model (bootstrap intervals, the random baseline,
export, the command line) and on one input (the page's table), each value equal to its direct computation."""
from __future__ import annotations

import json

import pytest
from tolerances import float32_tolerance

from corpora import load_dataset
from evaluation.baselines import NOT_DISTINGUISHABLE
from evaluation.faithfulness import naopc, naopc_bounds, other_measures, soft
from evaluation.metric import RANDOM_METHOD
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import results_frame

pytestmark = pytest.mark.integration
METHODS = ["saliency", "leave_one_out"]
OPTIONS = {"seed": 0, "random_orderings": 10, "soft_samples": 4, "naopc_exact_words": 9, "naopc_beam": 2}


@pytest.fixture(scope="module")
def run(quick_classifier, tmp_path_factory):
    from explainers.cache import DEFAULT_CACHE

    tmp = tmp_path_factory.mktemp("newer-run")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(tmp / "cache"))
        patch.setattr(DEFAULT_CACHE, "directory", tmp / "explanations")
        store = ResultStore(tmp / "results.sqlite")
        store, summary = run_evaluation(str(quick_classifier.source), "sst2:dev", METHODS, ["naopc", "soft"],
                                        limit=2, options=OPTIONS, store=store)
        assert summary.status == "finished" and summary.done == 2, summary.errors
        yield store, summary


def test_run_table_has_intervals_and_the_random_baseline(run):
    store, summary = run
    table = run_table(store, summary.run_id)
    for metric in ("naopc-comprehensiveness", "naopc-sufficiency", "soft-comprehensiveness", "soft-sufficiency"):
        rows = table[table["metric"] == metric].set_index("method")
        assert set(rows.index) == set(METHODS) | {RANDOM_METHOD}, metric
        for method in METHODS:
            assert rows.loc[method, "low"] <= rows.loc[method, "mean"] <= rows.loc[method, "high"]
            assert rows.loc[method, "vs_random"] in ("better than random", "worse than random", NOT_DISTINGUISHABLE)
    exported = json.dumps(store.export_run(summary.run_id), default=str)
    assert "naopc-sufficiency" in exported and "soft-comprehensiveness" in exported


def test_per_example_values_equal_the_direct_computation(run, quick_classifier):
    from explainers import create

    store, summary = run
    frame = results_frame(store, summary.run_id)
    example = load_dataset("sst2:dev", limit=1)[0]
    encoding = quick_classifier.encode(example.text)
    explanation = create("leave_one_out").explain(quick_classifier, encoding)
    stored = frame[(frame["example_id"] == example.id) & (frame["method"] == "leave_one_out")].set_index("metric")
    direct = {**naopc.compute(quick_classifier, encoding, explanation, example, OPTIONS),
              **soft.compute(quick_classifier, encoding, explanation, example, OPTIONS)}
    for metric, value in direct.items():
        # batched with other orderings / rows: float32 noise of probabilities, divided by the normalizer
        assert stored.loc[metric, "value"] == pytest.approx(value, abs=100 * float32_tolerance(1.0)), metric


def test_one_input_table_with_the_random_band(quick_classifier):
    from explainers import create

    encoding = quick_classifier.encode("a gorgeous , witty film")
    explanations = {m: create(m).explain(quick_classifier, encoding) for m in METHODS}
    table = other_measures.measures_table(quick_classifier, encoding, explanations, ["naopc", "soft"], OPTIONS)
    rows = table.set_index(["metric", "method"])
    direct = naopc.compute(quick_classifier, encoding, explanations["saliency"], None, OPTIONS)
    assert rows.loc[("naopc-comprehensiveness", "saliency"), "value"] == pytest.approx(
        direct["naopc-comprehensiveness"], abs=100 * float32_tolerance(1.0))
    assert json.loads(rows.loc[("naopc-comprehensiveness", "saliency"), "details"])["search"] == naopc_bounds.EXACT
    random_row = rows.loc[("soft-sufficiency", RANDOM_METHOD)]
    assert random_row["random_low"] <= random_row["value"] <= random_row["random_high"]
    wide = other_measures.wide(table)
    assert "NAOPC comprehensiveness ↑" in wide.index and RANDOM_METHOD in wide.columns


def test_cli_lists_the_measures_and_takes_their_options(quick_classifier, isolated_cache, tmp_path, capsys,
                                                         monkeypatch):
    import cli

    assert cli.main(["evaluate", "--list-metrics"]) == 0
    listed = capsys.readouterr().out
    for metric in ("naopc-comprehensiveness", "soft-sufficiency", "road-morf", "road-lerf"):
        assert metric in listed
    out = tmp_path / "summary.csv"
    code = cli.main(["evaluate", "--model", str(quick_classifier.source), "--limit", "1", "--methods", "saliency",
                     "--metrics", "soft", "--soft-samples", "2", "--random-orderings", "0", "--out", str(out)])
    assert code == 0 and "soft-sufficiency" in out.read_text()
