"""`cli.py adversarial` on the tiny keyword model saved to a folder: a dataset run (resumable, with intervals), one
text, and one-line errors."""
from __future__ import annotations

import csv
import json

import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv

import cli


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("adversarial-cli")
    folder = save_keyword_model(keyword_classifier, root / "model")
    data = write_keyword_csv(root / "data.csv", 4, seed=3)
    return ["adversarial", "--model", str(folder), "--dataset", data, "--steps", "4", "--ig-steps", "4"]


def test_a_dataset_run_reports_each_measure_with_an_interval_and_resumes(tiny, isolated_cache, capsys):
    argv = tiny + ["--limit", "3", "--methods", "input_x_gradient,integrated_gradients", "--json"]
    assert cli.main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {(r["method"], r["metric"]): r for r in report["summary"]}
    attacked = 3 - report["skipped_inputs"].get("input_x_gradient", 0)
    for method in ("input_x_gradient", "integrated_gradients"):
        for metric in ("rank_change", "top_k_sum_change", "probability_change", "class_kept"):
            row = rows[(method, metric)]
            assert row["n"] == attacked and row["low"] <= row["mean"] <= row["high"]
    assert rows[("input_x_gradient", "class_kept")]["mean"] == 1.0  # the unconstrained attack keeps the class
    assert report["run"]["config"]["config"]["steps"] == 4
    # the same command again finds the finished run: nothing is recomputed
    assert cli.main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["run"]["id"] == report["run"]["id"] and again["summary"] == report["summary"]


def test_one_text_writes_its_measures(tiny, isolated_cache, tmp_path, capsys):
    out = tmp_path / "attack.csv"
    argv = tiny + ["--text", "the film was good and the cast was fine but the end was slow", "--methods",
                   "saliency", "--out", str(out)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("saliency: Rank Change")
    with out.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["method"] == "saliency" and 0.0 <= float(row["rank_change"]) <= 1.0


@pytest.mark.parametrize("extra, message", [
    (["--methods", "lime"], "differentiable methods"),
    (["--text", "good film", "--methods", "saliency"], "rounds to 0"),
    (["--epsilon", "-1"], "epsilon"),
])
def test_bad_input_gets_one_line(tiny, isolated_cache, extra, message, capsys):
    assert cli.main(tiny + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err.lower() and "Traceback" not in err


def _long_text(words: int) -> str:
    from tiny_models import FILLER, KEYWORD

    return " ".join([KEYWORD] + [FILLER[i % len(FILLER)] for i in range(words - 1)])


def test_a_long_text_is_attacked_over_its_windows_under_the_chosen_rule(tiny, isolated_cache, capsys):
    argv = tiny + ["--text", _long_text(150), "--methods", "saliency", "--window-aggregate", "max", "--json"]
    assert cli.main(argv) == 0
    result = json.loads(capsys.readouterr().out)["results"]["saliency"]
    assert result["windows"]["windows"] >= 3 and result["windows"]["aggregate"] == "max"
    assert len(result["original_shares"]) >= 149  # every word token of the text, none cut


def test_a_very_long_text_needs_allow_long_and_spans_are_refused(tiny, isolated_cache, capsys):
    argv = tiny + ["--text", _long_text(600), "--methods", "saliency", "--steps", "1"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "--allow-long" in err and "windows" in err
    assert cli.main(argv + ["--allow-long", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["results"]["saliency"]["steps_taken"] == 1
    assert cli.main(argv + ["--spans", "0:4"]) == 2
    assert "spans are not its players" in capsys.readouterr().err
