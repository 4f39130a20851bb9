"""`cli.py counterfactuals` and `cli.py errors --map` on the real quick model: the flips a generator lists
re-predict to the label written; the map's coordinates are scikit-learn's PCA of the pooled states."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest
import torch
from sklearn.decomposition import PCA
from test_errors_cli import ROWS, cache, data_file  # noqa: F401 (the fixture)

import cli

pytestmark = pytest.mark.integration


def test_word_replacer_on_a_dataset_writes_a_dataset_file(cache, tmp_path, quick_classifier):  # noqa: F811
    path = data_file(tmp_path)
    out = tmp_path / "cf.csv"
    argv = ["counterfactuals", "--model", "default-quick", "--generator", "word-replacer", "--rules",
            "dull -> delightful; charming -> dreadful; best -> worst", "--dataset", f"file:{path}", "--out", str(out)]
    assert cli.main(argv) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 3
    for row in rows:
        label = quick_classifier.labels[int(np.argmax(quick_classifier.predict_text(row["text"])))]
        assert label == row["prediction"] and (row["flipped"] == "True") == (label != row["original_prediction"])
    assert cli.main(["explain", "--model", "default-quick", "--text", rows[0]["text"], "--methods", "random",
                     "--json"]) == 0  # a counterfactual is an input like any other


def test_hotflip_on_one_text_json(cache, capsys, quick_classifier):  # noqa: F811
    assert cli.main(["counterfactuals", "--model", "default-quick", "--text", ROWS[0][0], "--generator", "hotflip",
                     "--words", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert 1 <= len(rows) <= 2
    for row in rows:
        assert quick_classifier.labels[int(np.argmax(quick_classifier.predict_text(row["text"])))] == row["prediction"]


def test_bad_requests_get_a_message(cache, capsys):  # noqa: F811
    assert cli.main(["counterfactuals", "--model", "default-quick"]) != 0
    assert "--text" in capsys.readouterr().err
    assert cli.main(["counterfactuals", "--model", "default-quick", "--text", "a film", "--generator",
                     "word-replacer", "--rules", "good bad"]) != 0
    assert "'->'" in capsys.readouterr().err


def test_errors_map_is_pca_of_the_pooled_states(cache, tmp_path, quick_classifier):  # noqa: F811
    path = data_file(tmp_path)
    out = tmp_path / "map.csv"
    assert cli.main(["errors", "--model", "default-quick", "--dataset", f"file:{path}", "--method", "random",
                     "--min-count", "2", "--map", str(out), "--out", str(tmp_path / "errors.csv")]) == 0
    with out.open() as handle:
        rows = list(csv.DictReader(handle))
    assert [r["text"] for r in rows] == [t for t, _ in ROWS]
    with torch.no_grad():
        vectors = np.array([quick_classifier.model(**quick_classifier.tokenizer(t, return_tensors="pt"),
                                                   output_hidden_states=True).hidden_states[-1][0, 0].numpy()
                            for t, _ in ROWS])
    expected = PCA(n_components=2).fit_transform(vectors)
    coords = np.array([[float(r["pc1"]), float(r["pc2"])] for r in rows])
    signs = np.sign((coords * expected).sum(axis=0))
    assert np.allclose(coords * signs, expected, atol=1e-3)


def test_deletion_grid_command(cache, capsys, quick_classifier):  # noqa: F811
    text = "enormously entertaining for moviegoers of any age ."
    assert cli.main(["deletion-grid", "--model", "default-quick", "--text", text, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    words = text.split()
    assert len(rows) == len(words) + 1
    for i, row in enumerate(rows[1:]):
        probabilities = quick_classifier.predict_text(" ".join(words[:i] + words[i + 1:]))
        assert row["prediction"] == quick_classifier.labels[int(np.argmax(probabilities))]
        assert row["confidence"] == pytest.approx(probabilities.max(), abs=1e-5)
