"""`cli.py roar`: the printed Eq. 3 line without the 100 % floor, paper 000's presets and the `im` alias
(issue 31: a preset named after a paper runs that paper's measures, read from shared/notes/seeds-000-001.md)."""
from __future__ import annotations

import pandas as pd

from commands import roar
from evaluation.roar import scores as roar_scores


def _cell(kind, measure, ratio, seed, accuracy):
    return {"kind": kind, "measure": measure, "ratio": ratio, "seed": seed, "step": 0, "accuracy": accuracy,
            "macro_f1": accuracy, "n_test": 200}


def _report(frame: pd.DataFrame) -> dict:
    return {"run": {"id": "r", "title": "t", "status": "done", "done": 1, "total": 1}, "provenance": {},
            "failed_cells": {},
            "accuracy": {"curves": roar_scores.curves(frame).drop(columns=["values"]).to_dict("records"),
                         "scores": roar_scores.summary(frame).to_dict("records"),
                         "welch": roar_scores.welch_table(frame).to_dict("records")}}


def test_without_the_floor_the_report_prints_why_there_is_no_score_not_plus_100_percent(capsys):
    cells = {}
    for seed in (0, 1):
        for ratio, b, p in ((10.0, 0.85, 0.80), (50.0, 0.80, 0.60)):  # by hand: 5.0 relative to random at 50 %
            cells[f"r{ratio}{seed}"] = _cell("roar", "random", ratio, seed, b)
            cells[f"i{ratio}{seed}"] = _cell("roar", "ig", ratio, seed, p)
    roar.print_report(_report(roar_scores.cells_frame(cells)))
    printed = capsys.readouterr().out
    assert roar_scores.NO_FLOOR in printed
    assert "+100.0%" not in printed and "+nan%" not in printed
