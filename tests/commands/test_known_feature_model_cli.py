"""`cli.py known-feature --model X` (paper 003 s. 3.1): a folder runs as given, a built-in name resolves to
its twin of the same shape, anything else gets a message that says what to pass."""
from __future__ import annotations

import json

import pytest

import cli
from evaluation.faithfulness.known_feature import RECIPE, model_dir, recipe_for
from evaluation.runs.store import ResultStore


def test_a_folder_is_run_as_given(keyword_classifier, tmp_path, isolated_cache, monkeypatch, capsys):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    folder = tmp_path / "kf-model"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    assert cli.main(["known-feature", "--model", str(folder), "--limit", "3", "--methods", "saliency", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    run = ResultStore().get_run(printed["run_id"])
    assert run["config"]["model"] == str(folder) and run["total"] == 3
    assert {row["method"] for row in printed["summary"]} >= {"saliency"}


def test_built_in_names_resolve_to_their_twin_and_others_are_refused(tmp_path, capsys):
    assert recipe_for("default") == RECIPE and recipe_for("minilm-l2").blocks == 2
    assert recipe_for("minilm-causal").causal and model_dir(recipe_for("minilm-l2")).name.startswith("known-feature-l2")
    assert cli.main(["known-feature", "--model", str(tmp_path / "missing")]) != 0
    err = capsys.readouterr().err
    assert "not a built-in model" in err and "Traceback" not in err
    folder = tmp_path / "some-folder"
    folder.mkdir()
    assert cli.main(["known-feature", "--model", str(folder), "--prepare"]) != 0
    assert "a folder is used as it is" in capsys.readouterr().err


@pytest.mark.training
def test_documents_trains_the_document_twin_once_and_runs_on_known_feature_long(keyword_classifier, isolated_cache,
                                                                                 capsys):
    short = model_dir(RECIPE)  # the tiny keyword model stands in for the short twin in an isolated cache
    keyword_classifier.model.save_pretrained(short)
    keyword_classifier.tokenizer.save_pretrained(short)
    (short / "manifest.json").write_text(json.dumps({"accuracy": 1.0, "train_examples": 400,
                                                     "label_names": ["negative", "positive"]}))
    argv = ["known-feature", "--documents", "--limit", "2", "--methods", "saliency", "--json"]
    assert cli.main(argv) == 0
    captured = capsys.readouterr()
    assert "training the document twin" in captured.err and "document twin: " in captured.err
    run = ResultStore().get_run(json.loads(captured.out)["run_id"])
    assert run["config"]["dataset"] == "known-feature-long:dev" and run["total"] == 2
    assert "known-feature-long-" in run["config"]["model"]
    assert cli.main(argv) == 0 and "training the document twin" not in capsys.readouterr().err  # cached


def test_documents_needs_a_built_in_model(tmp_path, capsys):
    folder = tmp_path / "some-folder"
    folder.mkdir()
    assert cli.main(["known-feature", "--model", str(folder), "--documents"]) != 0
    err = capsys.readouterr().err
    assert "--documents trains the document twin of a built-in model" in err and "Traceback" not in err
