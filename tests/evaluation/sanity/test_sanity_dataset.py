"""Dataset-level sanity checks through the shared runner and store, and `cli.py sanity`, on the tiny keyword model
saved to a folder (so cells load it like any model) and a small JSONL file: per-example values, means and CIs
recomputed by hand, the randomized model's accuracy per stage, resume, the head check and bad input."""
from __future__ import annotations

import json

import numpy as np
import pytest
from tiny_models import keyword_sentences

import cli
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity_dataset
from evaluation.sanity.head_check import run_head_check
from evaluation.sanity.one_input import CHANCE, run_sanity
from models import load_classifier


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("keyword-model")
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.fixture(scope="module")
def keyword_file(tmp_path_factory):
    texts, labels = keyword_sentences(6, seed=3)
    path = tmp_path_factory.mktemp("data") / "keyword.jsonl"
    path.write_text("\n".join(json.dumps({"text": t, "label": y}) for t, y in zip(texts, labels)))
    return f"file:{path}"


def test_layer_study_numbers_match_single_runs(keyword_folder, keyword_file, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    methods = ["leave_one_out", "saliency:paper-003"]
    store, summary = sanity_dataset.run_sanity_study(keyword_folder, keyword_file, methods, limit=6, seed=2, store=store)
    assert summary.status == "finished" and summary.done == 6 and not summary.errors
    frame = sanity_dataset.results_frame(store, summary.run_id)
    table = sanity_dataset.summarize(frame)
    classifier = load_classifier(keyword_folder)
    from corpora import load_dataset

    examples = load_dataset(keyword_file)
    # one example recomputed directly: the stored per-example values are run_sanity's
    direct = run_sanity(classifier, classifier.encode(examples[4].text), methods, seed=2, cache=None).frame()
    stored = frame[frame["example_id"] == examples[4].id]
    for row in direct.itertuples():
        value = stored[(stored["stage"] == row.stage) & (stored["method"] == row.method)
                       & (stored["metric"] == "sanity_spearman")]["value"].iloc[0]
        assert value == pytest.approx(row.spearman, nan_ok=True)
    # the summary mean is the plain mean over examples, with a CI around it
    part = frame[(frame["stage"] == "embeddings") & (frame["method"] == "leave_one_out")
                 & (frame["metric"] == "sanity_spearman")]["value"]
    row = table[(table["stage"] == "embeddings") & (table["method"] == "leave_one_out")
                & (table["metric"] == "sanity_spearman")].iloc[0]
    assert row["mean"] == pytest.approx(part.mean()) and row["n"] == 6 and row["low"] <= row["mean"] <= row["high"]
    # the original model's accuracy equals its accuracy computed directly; the randomized stages are stored too
    names = sanity_dataset.stage_names_for(store.get_run(summary.run_id))
    accuracy = sanity_dataset.accuracy_by_stage(table, names).set_index("stage")
    predicted = classifier.predict_proba([classifier.encode(e.text) for e in examples]).argmax(axis=1)
    assert accuracy.loc["original", "mean"] == pytest.approx(np.mean(predicted == [e.label for e in examples]))
    assert list(accuracy.index) == names
    assert sanity_dataset.chance_level(store, summary.run_id) == pytest.approx(0.5)
    curves = sanity_dataset.curves(table, names, "sanity_spearman")
    assert set(curves["method"]) == {*methods, CHANCE}
    assert len(curves[curves["method"] == CHANCE]) == len(names)
    assert abs(curves[curves["method"] == CHANCE]["mean"].iloc[0]) < 0.3  # random rankings: about 0
    # the same study again resumes: nothing is recomputed
    _, again = sanity_dataset.run_sanity_study(keyword_folder, keyword_file, methods, limit=6, seed=2, store=store)
    assert again.run_id == summary.run_id and again.done == 6 and again.seconds < summary.seconds


def test_head_study_matches_the_single_check(keyword_folder, keyword_file, tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    store, summary = sanity_dataset.run_sanity_study(keyword_folder, keyword_file, ["leave_one_out"], limit=3, check="head",
                                            seeds=[0, 1], store=store)
    frame = sanity_dataset.results_frame(store, summary.run_id)
    table = sanity_dataset.head_table(frame).set_index("method")
    classifier = load_classifier(keyword_folder)
    from corpora import load_dataset

    changes = []
    for example in load_dataset(keyword_file, limit=3):
        result = run_head_check(classifier, classifier.encode(example.text), ["leave_one_out"], seeds=[0, 1],
                                cache=None)
        changes += list(result.frame()["sign_change"])
    assert table.loc["leave_one_out", "sign_change_mean"] == pytest.approx(np.mean(changes))
    assert table.loc["leave_one_out", "sign_change_std"] == pytest.approx(np.std(changes, ddof=1))
    assert table.loc["leave_one_out", "n"] == 3
    names = sanity_dataset.stage_names_for(store.get_run(summary.run_id))
    assert names == ["original", "seed 0", "seed 1"]
    assert len(sanity_dataset.accuracy_by_stage(sanity_dataset.summarize(frame), names)) == 3


def test_bad_requests_are_refused_before_any_work(keyword_folder, keyword_file, tmp_path):
    from models import ModelError

    store = ResultStore(tmp_path / "results.sqlite")
    with pytest.raises(ModelError, match="Unknown method"):
        sanity_dataset.start_sanity(keyword_folder, keyword_file, ["nope"], store=store)
    with pytest.raises(ModelError, match="Unknown mode"):
        sanity_dataset.start_sanity(keyword_folder, keyword_file, ["saliency"], mode="sideways", store=store)
    with pytest.raises(ModelError, match="at least one method"):
        sanity_dataset.start_sanity(keyword_folder, keyword_file, [], store=store)
    assert store.list_runs() == []


def test_cli_sanity_on_a_dataset_and_on_one_text(keyword_folder, keyword_file, isolated_cache, capsys, tmp_path,
                                                  monkeypatch):
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setattr(DEFAULT_CACHE, "directory", isolated_cache / "explanations")
    csv_path = tmp_path / "summary.csv"
    code = cli.main(["sanity", "--model", keyword_folder, "--dataset", keyword_file, "--limit", "4", "--methods",
                     "leave_one_out,random", "--json", "--out", str(csv_path)])
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "finished" and report["stages"][0] == "original"
    assert report["flags"]["random"]["status"] == "fails"  # a seeded random ranking ignores the model
    assert report["flags"]["random"]["value"] == pytest.approx(1.0)
    assert csv_path.read_text().startswith("stage,stage_index,method,metric,mean")
    code = cli.main(["sanity", "--model", keyword_folder, "--text", "the movie was excellent", "--methods",
                     "attention", "--check", "head", "--seeds", "0,1"])
    out = capsys.readouterr().out
    assert code == 0 and "attention" in out and "seed" in out
    assert cli.main(["sanity", "--model", keyword_folder, "--text", "x", "--methods", "nope"]) == 2
    assert "Unknown method" in capsys.readouterr().err
    assert cli.main(["sanity", "--model", keyword_folder, "--text", "   ", "--methods", "attention"]) == 2
    assert cli.main(["sanity", "--model", keyword_folder, "--dataset", keyword_file, "--seeds", "a,b",
                     "--check", "head", "--methods", "attention"]) == 2
    assert "--seeds" in capsys.readouterr().err



def test_chance_band_is_split_from_the_method_curves():
    """The random baseline's band as the page draws it: the summary's one chance row (stage "any"), repeated by
    ``curves`` at every stage, becomes one {mean, low, high}; the method rows are left as they were."""
    import pandas as pd

    summary = pd.DataFrame([
        {"stage": "original", "stage_index": 0, "method": "saliency", "metric": "sanity_spearman", "mean": 1.0,
         "low": 1.0, "high": 1.0, "n": 3},
        {"stage": "head", "stage_index": 1, "method": "saliency", "metric": "sanity_spearman", "mean": 0.4,
         "low": 0.2, "high": 0.6, "n": 3},
        {"stage": "any", "stage_index": -1, "method": CHANCE, "metric": "sanity_spearman", "mean": 0.05,
         "low": -0.1, "high": 0.2, "n": 3},
        {"stage": "original", "stage_index": -1, "method": sanity_dataset.MODEL_ROW, "metric": "correct",
         "mean": 1.0, "low": 1.0, "high": 1.0, "n": 3}])
    curves = sanity_dataset.curves(summary, ["original", "head"])
    band, methods = sanity_dataset.chance_band(curves)
    assert band == {"mean": 0.05, "low": -0.1, "high": 0.2}
    assert methods["method"].tolist() == ["saliency", "saliency"] and methods["mean"].tolist() == [1.0, 0.4]
    none, same = sanity_dataset.chance_band(curves[curves["method"] != CHANCE])
    assert none is None and same["mean"].tolist() == [1.0, 0.4]
