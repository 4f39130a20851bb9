"""`cli.py explain --text` splits typed text as the datasets are and says so."""
from __future__ import annotations

import json

import pytest
from roar_fixtures import save_keyword_model

import cli


@pytest.fixture(scope="module")
def folder(keyword_classifier, tmp_path_factory):
    return str(save_keyword_model(keyword_classifier, tmp_path_factory.mktemp("explain") / "model"))


def test_explain_splits_punctuation_off_the_words(folder, capsys):
    code = cli.main(["explain", "--model", folder, "--text", "An excellent, fun film!", "--methods", "leave_one_out",
                     "--json", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 0
    report = json.loads(captured.out)
    assert report["text"] == "An excellent , fun film !"
    assert report["explanations"][0]["words"] == ["An", "excellent", ",", "fun", "film", "!"]
    assert "split as the datasets are: 'An excellent , fun film !'" in captured.err


def test_explain_leaves_split_text_alone_and_quiet(folder, capsys):
    assert cli.main(["explain", "--model", folder, "--text", "an excellent , fun film", "--methods", "leave_one_out",
                     "--json", "--no-cache"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["text"] == "an excellent , fun film" and "split" not in captured.err
