"""The newer measures in sanity dataset runs and in `cli.py`: eMPRT, sMPRT and repeatability stored per example
equal the single-input computations, come out with bootstrap intervals and a random band, reach the CSV / JSON
export and `evaluate --list-metrics`; requests that cannot work are refused with a message."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_models import keyword_sentences

import cli
from corpora import load_dataset
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity_dataset
from evaluation.sanity import emprt, repeatability, smprt
from evaluation.sanity.one_input import CHANCE, run_sanity
from models import ModelError, load_classifier

METHODS = ["saliency", "random"]
SMOOTHING = smprt.SmoothingOptions(samples=2, noise=0.1, seed=0)


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("keyword-model")
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def keyword_file(tmp_path_factory):
    texts, labels = keyword_sentences(4, seed=7)
    path = tmp_path_factory.mktemp("data") / "keyword.jsonl"
    path.write_text("\n".join(json.dumps({"text": t, "label": y}) for t, y in zip(texts, labels)))
    return f"file:{path}"


def test_extra_measures_match_the_single_input_computations(keyword_folder, keyword_file, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    store, summary = sanity_dataset.run_sanity_study(keyword_folder, keyword_file, METHODS, limit=3, seed=1,
                                                     store=store, measures=["smprt", "emprt", "repeatability"],
                                                     smoothing=SMOOTHING, repeat_seeds=[0, 1, 2])
    assert summary.status == "finished" and not summary.errors
    frame = sanity_dataset.results_frame(store, summary.run_id)
    classifier = load_classifier(keyword_folder)
    example = load_dataset(keyword_file, limit=3)[2]
    encoding = classifier.encode(example.text)
    stored = frame[frame["example_id"] == example.id].copy()

    def value(metric, method, stage):
        part = stored[(stored["metric"] == metric) & (stored["method"] == method) & (stored["stage"] == stage)]
        return part["value"].iloc[0]

    plain = run_sanity(classifier, encoding, METHODS, seed=1, cache=None, chance_draws=1)
    for method, expected in emprt.emprt(plain).items():
        assert value("sanity_emprt", method, "embeddings") == pytest.approx(expected, abs=1e-12, nan_ok=True)
    smooth = smprt.run_smprt(classifier, encoding, METHODS, SMOOTHING, seed=1, cache=None, chance_draws=1).frame()
    for row in smooth.itertuples():
        assert value("sanity_smprt", row.method, row.stage) == pytest.approx(row.spearman_abs, abs=1e-12,
                                                                              nan_ok=True)
    repeated = repeatability.run_repeatability(classifier, encoding, METHODS, seeds=[0, 1, 2], cache=None).frame()
    for row in repeated.itertuples():
        assert value("sanity_repeatability", row.method, "original") == pytest.approx(row.spearman, abs=1e-12)
    assert value("sanity_repeatability", "saliency", "original") == 1.0
    # intervals over the examples and a random band for every measure
    table = sanity_dataset.summarize(frame)
    for metric in ("sanity_emprt", "sanity_repeatability", "sanity_repeatability_top_k"):
        band, rows = sanity_dataset.measure_table(table, metric)
        assert band is not None and np.isfinite(band["mean"]), metric
        row = rows.set_index("method").loc["saliency"]
        values = frame[(frame["metric"] == metric) & (frame["method"] == "saliency")]["value"]
        assert row["mean"] == pytest.approx(values.mean()) and row["n"] == 3 and row["low"] <= row["high"]
    names = sanity_dataset.stage_names_for(store.get_run(summary.run_id))
    band, curves = sanity_dataset.chance_band(sanity_dataset.curves(table, names, "sanity_smprt"))
    assert band is not None and set(curves["method"]) == set(METHODS) and len(curves) == 2 * len(names)
    assert store.get_run(summary.run_id)["config"]["smoothing"]["samples"] == 2


def test_requests_that_cannot_work_are_refused(keyword_folder, keyword_file, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    with pytest.raises(ModelError, match="cascading"):
        sanity_dataset.start_sanity(keyword_folder, keyword_file, METHODS, mode="independent", measures=["emprt"],
                                    store=store)
    with pytest.raises(ModelError, match="layers"):
        sanity_dataset.start_sanity(keyword_folder, keyword_file, METHODS, check="head", measures=["repeatability"],
                                    store=store)
    with pytest.raises(ModelError, match="two different seeds"):
        sanity_dataset.start_sanity(keyword_folder, keyword_file, METHODS, measures=["repeatability"],
                                    repeat_seeds=[1], store=store)
    assert store.list_runs() == []


def test_cli_measures_export_and_list(keyword_folder, keyword_file, isolated_cache, capsys, tmp_path, monkeypatch):
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setattr(DEFAULT_CACHE, "directory", isolated_cache / "explanations")
    csv_path, json_path = tmp_path / "summary.csv", tmp_path / "report.json"
    args = ["sanity", "--model", keyword_folder, "--dataset", keyword_file, "--limit", "2", "--methods",
            "saliency,random", "--measures", "emprt,smprt,repeatability", "--smprt-samples", "2", "--repeat-seeds",
            "0,1"]
    assert cli.main([*args, "--out", str(csv_path)]) == 0
    printed = capsys.readouterr().out
    assert "eMPRT" in printed and "sMPRT" in printed and "Repeatability" in printed and CHANCE in printed
    text = csv_path.read_text()
    for metric in ("sanity_emprt", "sanity_smprt", "sanity_repeatability", "sanity_repeatability_top_k"):
        assert metric in text
    assert cli.main([*args, "--out", str(json_path)]) == 0  # the same run, reopened
    report = json.loads(json_path.read_text())
    assert set(report["measures"]) == {"sanity_emprt", "sanity_smprt", "sanity_repeatability",
                                       "sanity_repeatability_top_k"}
    assert report["measures"]["sanity_emprt"]["band"] is not None
    capsys.readouterr()
    assert cli.main(["sanity", "--model", keyword_folder, "--text", "the movie was excellent", "--methods",
                     "saliency", "--measures", "emprt,smprt", "--smprt-samples", "2", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert set(one["measures"]) == {"sanity_emprt", "sanity_smprt"}
    assert cli.main([*args[:-4], "--measures", "nope"]) == 2
    assert "Choose from" in capsys.readouterr().err
    assert cli.main(["evaluate", "--list-metrics"]) == 0
    listed = capsys.readouterr().out
    for metric in ("sanity_emprt", "sanity_smprt", "sanity_repeatability", "sanity_data_randomization"):
        assert metric in listed
