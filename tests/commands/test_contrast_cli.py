"""`cli.py explain --contrast` and `cli.py evaluate --contrast` on a saved three-class tiny model."""
from __future__ import annotations

import json

import numpy as np
import pytest

import cli
from explainers import create
from models import load_classifier

TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    from tiny_models import random_classifier

    classifier = random_classifier(seed=3, num_labels=3)
    path = tmp_path_factory.mktemp("contrast") / "model"
    classifier.model.save_pretrained(path)
    classifier.tokenizer.save_pretrained(path)
    return str(path)


def test_explain_contrast_is_the_difference_of_two_explanations(folder, capsys, tmp_path):
    out = tmp_path / "words.csv"
    assert cli.main(["explain", "--model", folder, "--text", TEXT, "--methods", "leave_one_out", "--target", "0",
                     "--contrast", "2", "--json", "--no-cache", "--out", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    (explanation,) = report["explanations"]
    assert explanation["provenance"]["target"]["contrast"]["index"] == 2
    classifier = load_classifier(folder)
    encoding = classifier.encode(TEXT)
    a = create("leave_one_out").explain(classifier, encoding, 0).word_scores
    b = create("leave_one_out").explain(classifier, encoding, 2).word_scores
    np.testing.assert_allclose(explanation["word_scores"], a - b, rtol=1e-6, atol=1e-9)
    assert "contrast" in out.read_text().splitlines()[0]


def test_explain_refuses_a_bad_contrast_with_a_message(folder, capsys):
    with pytest.raises(SystemExit):
        cli.main(["explain", "--model", folder, "--text", TEXT, "--methods", "leave_one_out", "--contrast", "other"])
    assert "contrast must be a class index" in capsys.readouterr().err
    assert cli.main(["explain", "--model", folder, "--text", TEXT, "--methods", "leave_one_out", "--target", "1",
                     "--contrast", "1", "--no-cache"]) != 0
    assert "target class itself" in capsys.readouterr().err


def test_evaluate_contrast_is_stored_and_read(folder, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "data.csv"
    data.write_text("text\n" + f"{TEXT}\nthe music was long\n")
    out = tmp_path / "summary.csv"
    assert cli.main(["evaluate", "--model", folder, "--dataset", f"file:{data}", "--methods", "leave_one_out",
                     "--metrics", "eraser", "--random-orderings", "0", "--contrast", "runner-up",
                     "--out", str(out)]) == 0
    assert "contrast runner-up" in capsys.readouterr().out
    import pandas as pd

    table = pd.read_csv(out)
    assert set(table["contrast"]) == {"runner-up"}
