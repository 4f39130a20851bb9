"""`cli.py known-feature --model X` (paper 003 s. 3.1): a folder runs as given, a built-in name resolves to
its twin of the same shape, anything else gets a message that says what to pass."""
from __future__ import annotations

import json

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
