"""`cli.py prepare-ffid` builds F-Fidelity's fine-tuned copy of a tiny model; `cli.py evaluate --metrics ffid` then
scores FFid+ / FFid- over a dataset with confidence intervals and the random baseline, and lists them."""
from __future__ import annotations

import csv
import json

from roar_fixtures import save_keyword_model, write_keyword_csv

import cli


def test_list_metrics_names_ffid(capsys):
    assert cli.main(["evaluate", "--list-metrics"]) == 0
    out = capsys.readouterr().out
    assert "ffid: F-Fidelity" in out and "ffid_plus ↑" in out and "ffid_minus ↓" in out


def test_prepare_then_evaluate_over_a_dataset(keyword_classifier, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    train = write_keyword_csv(tmp_path / "train.csv", 80, seed=4)
    test = write_keyword_csv(tmp_path / "test.csv", 6, seed=5)
    base = ["prepare-ffid", "--model", folder, "--train-data", train, "--train-size", "0", "--steps", "8",
            "--chunks", "2", "--batch-size", "8", "--lr", "0.001"]
    assert cli.main(base + ["--estimate"]) == 0
    assert "8 steps x batch 8" in capsys.readouterr().err
    assert cli.main(base + ["--json"]) == 0
    manifest = json.loads(capsys.readouterr().out)
    assert manifest["steps"] == 8 and manifest["beta"] == 0.1 and manifest["train_size"] == 80
    assert cli.main(base) == 0  # already there: found, not rebuilt
    assert "already has an F-Fidelity copy" in capsys.readouterr().err

    summary = tmp_path / "summary.csv"
    assert cli.main(["evaluate", "--model", folder, "--dataset", test, "--methods", "leave_one_out", "--metrics",
                     "ffid", "--limit", "0", "--random-orderings", "10", "--out", str(summary)]) == 0
    with open(summary) as handle:
        rows = {r["metric"]: r for r in csv.DictReader(handle) if r["method"] == "leave_one_out"}
    assert set(rows) == {"ffid_plus", "ffid_minus"}
    for row in rows.values():
        assert float(row["low"]) <= float(row["mean"]) <= float(row["high"]) and int(row["n"]) == 6
        assert row["random_mean"] != ""
