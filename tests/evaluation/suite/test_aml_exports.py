"""AML's "tuned for <metric>" badge is a column of every exported file of AML results, and the selection warning
(AML scored on the metric it was selected on) travels with the exported metric rows. Each test writes
the file the user would download and reads it back: a tiny keyword model saved to a folder, an attribution model
built for it in a private cache."""
from __future__ import annotations

import csv
import io
import json

import pandas as pd
import pytest
from roar_fixtures import save_keyword_model
from tiny_models import FILLER, KEYWORD, keyword_sentences

import cli
from evaluation.plausibility.dataset import per_example_frame, run_report
from evaluation.runs.store import ResultStore
from evaluation.suite.plausibility_run import run_plausibility
from evaluation.summary import results_frame
from explainers import create
from explainers.export import scores_csv, scores_json
from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
from models import load_classifier

BADGE = "Comprehensiveness (AOPC)"  # the default selection metric's label, as the heatmap badge shows it
WARNED = "comprehensiveness-eraser"  # the same metric's id among the faithfulness metrics


@pytest.fixture()
def aml_model(keyword_classifier, tmp_path, isolated_cache) -> str:
    """A keyword model folder with an AML attribution model built for it (a tiny recipe)."""
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "keyword"))
    texts, _labels = keyword_sentences(40, seed=2)
    prepare_aml(load_classifier(folder), [(t, None) for t in texts],
                AMLRecipe(train_size=24, validation_size=8, epochs=1.0), log=lambda _: None)
    return folder


def _keyword_file(path, n: int = 6):
    rows = []
    for i in range(n):
        words = [FILLER[(3 * i + j) % len(FILLER)] for j in range(5)]
        words.insert(2, KEYWORD)
        rows.append({"text": " ".join(words), "label": 1,
                     "rationale": " ".join(f"*{w}*" if w == KEYWORD else w for w in words)})
    path.write_text("\n".join(json.dumps(row) for row in rows))
    return path


def test_heatmap_exports_carry_the_badge(aml_model):
    classifier = load_classifier(aml_model)
    encoding = classifier.encode("the movie was excellent")
    explanations = [create("aml").explain(classifier, encoding), create("saliency").explain(classifier, encoding)]
    rows = list(csv.DictReader(io.StringIO(scores_csv(explanations))))
    by_method = {m: {r["tuned_for"] for r in rows if r["method"] == m} for m in ("aml", "saliency")}
    assert by_method == {"aml": {BADGE}, "saliency": {""}}
    assert explanations[0].provenance["details"]["badge"] == f"tuned for {BADGE}"  # the badge the page shows
    document = json.loads(scores_json(explanations))
    assert [e["tuned_for"] for e in document["explanations"]] == [BADGE, ""]


def test_faithfulness_exports_carry_the_badge_and_the_warning(aml_model, tmp_path, capsys):
    data = tmp_path / "three.csv"
    texts, labels = keyword_sentences(3, seed=5)
    data.write_text("text,label\n" + "".join(f"{t},{label}\n" for t, label in zip(texts, labels)))
    summary, per_example, document = tmp_path / "summary.csv", tmp_path / "each.csv", tmp_path / "run.json"
    for out in (summary, document):
        assert cli.main(["evaluate", "--model", aml_model, "--dataset", f"file:{data}", "--methods", "aml,saliency",
                         "--metrics", "eraser", "--random-orderings", "0", "--out", str(out),
                         "--per-example", str(per_example)]) == 0
    capsys.readouterr()
    table = pd.read_csv(summary, keep_default_na=False)
    aml, saliency = table[table["method"] == "aml"], table[table["method"] == "saliency"]
    assert set(aml["tuned_for"]) == {BADGE} and set(saliency["tuned_for"]) == {""}
    warned = table[table["selection_warning"] != ""]
    assert list(zip(warned["method"], warned["metric"])) == [("aml", WARNED)]
    assert "optimistic by construction" in warned["selection_warning"].iloc[0]
    assert len(aml) > 1  # the other metrics' rows of AML carry the badge but no warning
    each = pd.read_csv(per_example, keep_default_na=False)
    assert set(each[each["method"] == "aml"]["tuned_for"]) == {BADGE}
    assert set(each[each["selection_warning"] != ""]["metric"]) == {WARNED}
    assert len(each[(each["method"] == "aml") & (each["metric"] == WARNED)]) == 3  # one row per example
    run = json.loads(document.read_text())
    for rows in (run["summary"], run["per_example"]):
        assert {r["tuned_for"] for r in rows if r["method"] == "aml"} == {BADGE}
        assert {(r["method"], r["metric"]) for r in rows if r["selection_warning"]} == {("aml", WARNED)}


def test_plausibility_exports_carry_the_badge(aml_model, tmp_path):
    data = _keyword_file(tmp_path / "keyword.jsonl")
    store, run_id, summary = run_plausibility(aml_model, f"file:{data}", ["aml", "leave_one_out"],
                                              store=ResultStore(tmp_path / "results.sqlite"),
                                              options={"random_orderings": 2})
    assert summary.status == "finished" and not summary.errors
    report = json.loads(json.dumps(run_report(store, run_id), default=str))  # the page's JSON download
    metrics = pd.DataFrame(report["metrics"])
    assert set(metrics[metrics["method"] == "aml"]["tuned_for"]) == {BADGE}
    assert set(metrics[metrics["method"] != "aml"]["tuned_for"]) == {""}
    assert set(metrics["selection_warning"]) == {""}  # AML is selected on faithfulness, never on plausibility
    assert {r["method"]: r["tuned_for"] for r in report["paper000"] if r["method"] in ("aml", "leave_one_out")} == {
        "aml": BADGE, "leave_one_out": ""}
    each = pd.read_csv(io.StringIO(per_example_frame(results_frame(store, run_id)).to_csv(index=False)),
                       keep_default_na=False)  # the per-example CSV download
    assert set(each[each["method"] == "aml"]["tuned_for"]) == {BADGE}
    assert set(each[each["method"] == "leave_one_out"]["tuned_for"]) == {""}
