"""`cli.py roar`: the printed Eq. 3 line without the 100 % floor, paper 000's presets and the `im` alias
(a preset named after a paper runs that paper's measures, read from shared/notes/seeds-000-001.md)."""
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


# shared/notes/seeds-000-001.md, paper 000 Table 2: (a) LOOempty = the word deleted, log2-odds (000.2a);
# (b) IM = IM-top10: the 10 most likely masked-LM words, renormalized, log2-odds (000.2b). Table A6: LIME, LIME-BERT.
TABLE_2 = [("leave_one_out", {"operator": "delete", "score": "log2-odds"}),
           ("input_marginalization", {"candidates": "top-k", "k": 10, "score": "log2-odds"})]
TABLE_A6 = [("lime", {"n_samples": 1000}), ("lime_bert", {"n_samples": 1000})]


def _resolved(preset: str) -> list:
    from evaluation.roar.measures import resolve_measure
    from evaluation.roar.presets import PRESETS

    measures = [resolve_measure(m, PRESETS[preset]["settings"]) for m in PRESETS[preset]["measures"]]
    return [(m.method, m.explainer().params) for m in measures]


def _matches(resolved, expected) -> bool:
    return len(resolved) == len(expected) and all(
        method == want and all(getattr(params, k) == v for k, v in values.items())
        for (method, params), (want, values) in zip(resolved, expected))


def test_paper_000_presets_measure_table_2s_loo_empty_and_im():
    for preset in ("paper-000", "paper-000-quick", "paper-000-bert", "paper-000-bert-quick"):
        assert _matches(_resolved(preset), TABLE_2), preset


def test_table_a6_has_its_own_presets_named_for_it():
    for preset in ("paper-000-table-a6", "paper-000-table-a6-quick"):
        assert _matches(_resolved(preset), TABLE_A6), preset


def test_measures_im_parses_to_input_marginalization(monkeypatch):
    import cli
    from evaluation.roar import study

    monkeypatch.setattr(roar, "build_config", lambda **kwargs: study.build_config(**kwargs, check_model=False))
    config = roar.config_from_args(cli.build_parser().parse_args(["roar", "--measures", "im,lime-bert"]))
    assert [(m["id"], m["method"], m["preset"]) for m in config.measures] == [
        ("im", "input_marginalization", "paper-000-top10"), ("lime-bert", "lime_bert", "paper-000")]


def test_paper_001_presets_measure_table_2s_roberta_column_without_attention():
    # seeds-000-001.md 001.5, Table 2: RoBERTa rows Gradient, x * Gradient, IG; attention "—" (the paper's attention
    # is a BiLSTM's, section 4), so transformer attention is not in a preset named after the paper
    from evaluation.roar.presets import PRESETS

    for preset in ("paper-001", "paper-001-quick", "paper-001-one-token", "paper-001-one-token-quick"):
        methods = [method for method, _ in _resolved(preset)]
        assert methods == ["saliency", "input_x_gradient", "integrated_gradients"], preset
    assert "--measures gradient,ixg,ig,attention as this project's addition" in PRESETS["paper-001"]["description"]
