"""`cli.py explain` / `evaluate` on documents longer than the model's window."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from roar_fixtures import save_keyword_model
from tiny_models import FILLER, KEYWORD

import cli


@pytest.fixture(scope="module")
def folder(keyword_classifier, tmp_path_factory):
    return str(save_keyword_model(keyword_classifier, tmp_path_factory.mktemp("longdocs") / "model"))


def long_text(n_sentences: int = 20) -> str:
    rng = random.Random(3)
    sentences = [" ".join(rng.choice(FILLER) for _ in range(8)) + " ." for _ in range(n_sentences)]
    sentences[min(15, n_sentences - 1)] = f"the music was {KEYWORD} ."
    return " ".join(sentences)


def test_explain_reads_a_long_text_whole(folder, capsys):
    code = cli.main(["explain", "--model", folder, "--text", long_text(), "--methods", "leave_one_out,saliency", "--target", "1",
                     "--json", "--no-cache"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["truncated_tokens"] == 0 and report["windows"]["windows"] > 1
    loo = report["explanations"][0]
    assert len(loo["words"]) == len(long_text().split())
    assert loo["words"][int(np.argmax(loo["word_scores"]))] == KEYWORD  # beyond the first window
    assert report["explanations"][1]["provenance"]["input"]["windows"]["aggregate"] == "mean"


def test_explain_by_sentence_and_the_max_aggregate(folder, capsys):
    code = cli.main(["explain", "--model", folder, "--text", long_text(), "--methods", "leave_one_out",
                     "--granularity", "sentence", "--window-aggregate", "max", "--no-cache"])
    out = capsys.readouterr().out
    assert code == 0
    assert "20 sentence units are the players" in out and "largest logit" in out


def test_bad_spans_are_one_line_messages(folder, capsys):
    code = cli.main(["explain", "--model", folder, "--text", "a b c d", "--methods", "leave_one_out",
                     "--granularity", "span", "--spans", "0:2,1:3", "--span-unit", "word", "--no-cache"])
    assert code != 0 and "overlap" in capsys.readouterr().err


def test_evaluate_runs_metrics_on_whole_documents(keyword_classifier, tmp_path, monkeypatch, capsys):
    from evaluation.runs.store import ResultStore
    from evaluation.summary import results_frame

    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    data = tmp_path / "docs.csv"
    data.write_text("text,label\n" + f"{long_text()},1\n" + f"{long_text(12)},1\n")
    code = cli.main(["evaluate", "--model", str(folder), "--dataset", f"file:{data}", "--methods",
                     "leave_one_out,saliency", "--metrics", "eraser", "--random-orderings", "0", "--json"])
    assert code == 0, capsys.readouterr().err
    store = ResultStore()
    run = store.list_runs()[0]
    cells = store.cells(run["id"])
    assert all(len(cell["explanations"]["leave_one_out"]["words"]) == len(long_text(n).split())
               for cell, n in zip(cells.values(), (20, 12)))
    frame = results_frame(store, run["id"])
    assert frame["value"].notna().all() and len(frame) > 0
