"""`cli.py roar --synthetic`: paper 001 s. 3.3 from the command line, the same numbers as the module."""
from __future__ import annotations

import csv
import json

import pytest

import cli
from evaluation.roar.synthetic import STRATEGIES, SyntheticProblem, compare, synthetic_study


def test_the_json_and_csv_outputs_are_the_modules_result(tmp_path, capsys):
    assert cli.main(["roar", "--synthetic", "--seeds", "2", "--json", "--out", str(tmp_path / "s.csv")]) == 0
    printed = json.loads(capsys.readouterr().out)
    expected = json.loads(json.dumps(synthetic_study((0, 1))))
    assert printed == expected
    with open(tmp_path / "s.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 * len(STRATEGIES) * 17
    # each row against the single-problem module call it comes from (seed 1, ROAR, 3 features removed)
    single = compare(SyntheticProblem(seed=1))["roar"]["accuracy"][3]
    row = next(r for r in rows if r["seed"] == "1" and r["strategy"] == "roar" and r["removed"] == "3")
    assert float(row["accuracy"]) == pytest.approx(single, abs=1e-12)


def test_the_printed_report_checks_the_papers_statements(capsys):
    assert cli.main(["roar", "--synthetic", "--seeds", "0,3"]) == 0
    out = capsys.readouterr().out
    study = synthetic_study((0, 3))
    assert "Recursive ROAR and the ground truth are identical: holds on " \
           f"{study['checks'][0]['holds_on']}/2 seeds" in out
    assert f"{study['curves']['recursive'][4]:6.3f}" in out.splitlines()[[i for i, line in enumerate(out.splitlines())
                                                                           if line.startswith("recursive")][0]]
