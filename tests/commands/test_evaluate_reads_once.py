"""`cli.py evaluate` reads a finished run's cells once for all its tables (the summary with the plausibility
binarization, the per-example values, the random orderings, ERASER's official and micro F1 tables), where each
table read them again; the job runner reads them once more to find the finished cells. Same output either way."""
from __future__ import annotations

import json

import pytest
from report_card_fixtures import write_rationale_csv

import cli
from evaluation.runs.store import ResultStore


@pytest.fixture()
def model_and_data(keyword_classifier, tmp_path, monkeypatch):
    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))  # a private result store
    return folder, write_rationale_csv(tmp_path / "rationales.csv", 4, seed=3)


def _evaluate(folder, data, out, each) -> int:
    return cli.main(["evaluate", "--model", str(folder), "--dataset", data, "--methods", "leave_one_out",
                     "--metrics", "deletion,plausibility", "--random-orderings", "10", "--out", str(out),
                     "--per-example", str(each)])


def test_a_finished_run_is_read_once_for_every_table(model_and_data, tmp_path, monkeypatch, capsys):
    folder, data = model_and_data
    assert _evaluate(folder, data, tmp_path / "first.json", tmp_path / "first.csv") == 0
    first = capsys.readouterr().out
    reads = []
    original = ResultStore.cells

    def counting(self, run_id):
        reads.append(run_id)
        return original(self, run_id)

    monkeypatch.setattr(ResultStore, "cells", counting)
    assert _evaluate(folder, data, tmp_path / "again.json", tmp_path / "again.csv") == 0
    again = capsys.readouterr().out
    assert "ERASER's official script" in again and "Macro and micro token F1" in again  # every table was made
    assert len(reads) == 2 and len(set(reads)) == 1  # the runner's look for finished cells, then the tables
    assert again == first
    before, after = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("first", "again"))
    assert after.pop("run")["config"] == before.pop("run")["config"]  # the run's times are the reopening's
    assert after == before
    assert (tmp_path / "again.csv").read_text() == (tmp_path / "first.csv").read_text()
