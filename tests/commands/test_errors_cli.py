"""`cli.py errors` on the real quick model and a small user file: the table in confident-errors order
with each error's top words, --out CSV / JSON, --json on stdout, a file without labels, a bad method."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

import cli

pytestmark = pytest.mark.integration

ROWS = [("a gorgeous , witty , seductive movie .", "positive"),
        ("the plot is dull and the acting is worse .", "negative"),
        ("an utterly charming film .", "negative"),
        ("a boring , lifeless mess .", "positive"),
        ("one of the best films of the year .", "positive"),
        ("the movie is a triumph .", "negative")]


@pytest.fixture()
def cache(quick_cache):
    return quick_cache.parent


def data_file(tmp_path, labelled=True):
    path = tmp_path / ("labelled.csv" if labelled else "unlabelled.csv")
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"] if labelled else ["text"])
        writer.writerows(ROWS if labelled else [(t,) for t, _ in ROWS])
    return path


def test_errors_table_with_top_words_csv_and_json(cache, tmp_path, capsys, quick_classifier):
    path = data_file(tmp_path)
    argv = ["errors", "--model", "default-quick", "--dataset", f"file:{path}", "--method", "leave_one_out",
            "--min-count", "2"]
    assert cli.main(argv + ["--out", str(tmp_path / "errors.csv")]) == 0
    with (tmp_path / "errors.csv").open() as handle:
        table = list(csv.DictReader(handle))
    probabilities = np.array([quick_classifier.predict_text(text) for text, _ in ROWS])
    predicted = probabilities.argmax(axis=1)
    wrong = [quick_classifier.labels[p] != label for p, (_, label) in zip(predicted, ROWS)]
    assert len(table) == len(ROWS) and sum(wrong) >= 1
    assert [int(r["index"]) for r in table[:sum(wrong)]] == sorted(
        np.flatnonzero(wrong), key=lambda i: -probabilities[i].max())  # confident errors first
    for row in table:
        index = int(row["index"])
        assert row["predicted_label"] == quick_classifier.labels[predicted[index]]
        assert float(row["confidence"]) == pytest.approx(probabilities[index].max(), abs=1e-5)
        assert bool(row["top_words"]) == wrong[index]  # every error is explained, nothing else
        if wrong[index]:
            assert set(row["top_words"].split()) <= set(w.lower() for w in ROWS[index][0].split()) | set(
                ROWS[index][0].split())
    capsys.readouterr()
    assert cli.main(argv + ["--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["errors"] == sum(wrong) and report["slice"]["method"] == "leave_one_out"
    assert len(report["slice"]["correct"]) == sum(wrong) and report["shortcut_words"] is not None
    assert report["config"]["predictions_run"].startswith("predictions-")
    assert cli.main(argv + ["--out", str(tmp_path / "errors.json")]) == 0
    assert json.loads((tmp_path / "errors.json").read_text())["table"] == report["table"]
    capsys.readouterr()
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert "The most confident errors" in printed and "Shortcut words" in printed


def test_a_file_without_labels_gets_predictions_only(cache, tmp_path, capsys):
    path = data_file(tmp_path, labelled=False)
    assert cli.main(["errors", "--model", "default-quick", "--dataset", f"file:{path}", "--json"]) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert report["slice"] is None and report["shortcut_words"] is None and len(report["table"]) == len(ROWS)
    assert "needs labels" in err


def test_an_unknown_method_is_refused_before_any_work(cache, tmp_path, capsys):
    assert cli.main(["errors", "--model", "default-quick", "--method", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
