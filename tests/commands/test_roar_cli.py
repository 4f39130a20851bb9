"""`cli.py roar` on the tiny keyword model: estimate, run, list, export and import, and one-line errors."""
from __future__ import annotations

import csv
import json
from types import SimpleNamespace

import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv

import cli


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("roar-cli")
    folder = save_keyword_model(keyword_classifier, root / "model")
    train = write_keyword_csv(root / "train.csv", 40, seed=1)
    test = write_keyword_csv(root / "test.csv", 20, seed=2)
    return SimpleNamespace(root=root, base=["roar", "--model", str(folder), "--train-data", train, "--test-data", test,
                                            "--measures", "loo", "--ratios", "50", "--seeds", "1", "--variant",
                                            "head", "--train-size", "40", "--test-size", "20", "--epochs", "1",
                                            "--store", str(root / "results.sqlite")])


@pytest.fixture()
def cache(tiny, isolated_cache, monkeypatch):
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setattr(DEFAULT_CACHE, "directory", isolated_cache / "explanations")
    return isolated_cache


def test_estimate_prints_the_retrains_before_anything_runs(tiny, cache, capsys):
    assert cli.main(tiny.base + ["--estimate"]) == 0
    err = capsys.readouterr().err
    # anchors 2 x 1 seed + (loo, random) x 1 ratio x 1 seed
    assert "4 retrains" in err and "frozen encoder, trained head; 40 train / 20 test" in err


def test_a_study_runs_and_is_listed_exported_and_imported(tiny, cache, capsys, tmp_path):
    assert cli.main(tiny.base + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["run"]["status"] == "finished" and report["run"]["done"] == report["run"]["total"] == 4
    curves = report["accuracy"]["curves"]
    loo = {c["ratio"]: c["mean"] for c in curves if c["measure"] == "loo"}
    random = {c["ratio"]: c["mean"] for c in curves if c["measure"] == "random"}
    assert set(loo) == {0.0, 50.0, 100.0} and loo[50.0] < random[50.0]
    assert report["provenance"]["operator"] == "mask" and report["provenance"]["target"] == "predicted"
    run_id = report["run"]["id"]

    assert cli.main(tiny.base + []) == 0  # the same command again: every cell is already finished
    out = capsys.readouterr().out
    assert "4/4 cells" in out and "faithfulness (paper 001 Eq. 3" in out

    assert cli.main(["roar", "--store", str(tiny.root / "results.sqlite"), "--list"]) == 0
    assert run_id in capsys.readouterr().out
    exported = tmp_path / "study.json"
    assert cli.main(["roar", "--store", str(tiny.root / "results.sqlite"), "--export", run_id, "--out",
                     str(exported)]) == 0
    capsys.readouterr()
    assert cli.main(["roar", "--store", str(tmp_path / "laptop.sqlite"), "--import", str(exported), "--json"]) == 0
    captured = capsys.readouterr()
    imported = json.loads(captured.out)  # --json: stdout is JSON only; the "imported" note goes to stderr
    assert f"imported {run_id}" in captured.err
    assert imported["accuracy"]["curves"] == report["accuracy"]["curves"]

    # --out FILE.csv: the curves as a table (argparse used to read --out as --output and write nothing)
    table = tmp_path / "study.csv"
    assert cli.main(["roar", "--store", str(tiny.root / "results.sqlite"), "--show", run_id, "--out",
                     str(table)]) == 0
    rows = list(csv.DictReader(table.open()))
    assert {r["metric"] for r in rows} == {"accuracy", "macro_f1"}
    accuracy = {(r["measure"], float(r["ratio"])): float(r["mean"]) for r in rows if r["metric"] == "accuracy"}
    assert accuracy == pytest.approx({(c["measure"], c["ratio"]): c["mean"] for c in curves})


@pytest.mark.parametrize("extra, message", [
    (["--ratios", "ten"], "--ratios expects percentages"),
    (["--ratios", "120"], "between 0 and 100"),
    (["--seeds", "0"], "--seeds needs at least one seed"),
    (["--measures", "nonsense"], "Unknown importance measure 'nonsense'"),
    (["--operator", "zero"], "zero-embedding operator is not available"),
    (["--param", "loo.n_steps=3"], "no parameter"),
])
def test_bad_options_give_one_line_errors(tiny, cache, capsys, extra, message):
    assert cli.main(tiny.base + extra + ["--estimate"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_unknown_study_and_bad_import_file(tiny, cache, capsys, tmp_path):
    assert cli.main(["roar", "--store", str(tmp_path / "s.sqlite"), "--show", "roar-nothing"]) == 2
    assert "No study 'roar-nothing'" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert cli.main(["roar", "--store", str(tmp_path / "s.sqlite"), "--import", str(bad)]) == 2
    assert "Cannot import" in capsys.readouterr().err
