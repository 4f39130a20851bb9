"""`cli.py report-card` on the tiny keyword model saved in a folder whose name holds a `<script>` tag: the JSON on
stdout, the .json and self-contained .html files (every text escaped), the printed card, and one-line errors."""
from __future__ import annotations

import json
from html import escape

import pytest
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model

import cli

EVIL = "<script>alert(1)</script>"


@pytest.fixture(scope="module")
def tiny(keyword_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / f"keyword{EVIL.replace('/', '_')}"
    folder.mkdir()
    save_keyword_model(keyword_classifier, folder)
    data = write_rationale_csv(tmp_path_factory.mktemp("data") / "keyword.csv", 4, seed=3)
    return ["report-card", "--model", str(folder), "--dataset", data, "--quick", "--methods", "saliency,leave_one_out",
            "--checks", "faithfulness,adversarial,plausibility,agreement"]


def test_json_html_and_text_outputs(tiny, isolated_cache, tmp_path, capsys):
    assert cli.main(tiny + ["--json", "--out", str(tmp_path / "card.json")]) == 0
    printed = json.loads(capsys.readouterr().out)
    written = json.loads((tmp_path / "card.json").read_text())
    assert printed == written
    assert [r["check"] for r in printed["rules"]] == ["faithfulness", "adversarial", "plausibility", "agreement"]
    assert {(r["method"], r["check"]) for r in printed["rows"]} == {
        (m, c) for m in ("saliency", "leave_one_out") for c in ("faithfulness", "adversarial", "plausibility",
                                                                  "agreement")}
    assert {o["method"] for o in printed["ordering"]} == {"saliency", "leave_one_out"}

    # the second command reopens the stored studies: the same card, written as HTML
    assert cli.main(tiny + ["--out", str(tmp_path / "card.html")]) == 0
    out = capsys.readouterr().out
    assert "Ordering." in out and "leave_one_out: not applicable" in out and "pass: the 95 % CI" in out
    page = (tmp_path / "card.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and escape(EVIL.replace("/", "_")) in page
    assert "src=" not in page and "href=" not in page  # no external assets
    for row in printed["rows"]:
        assert f"<b>{escape(row['verdict'])}</b>" in page


@pytest.mark.parametrize("extra, message", [
    (["--checks", "speed"], "--checks: unknown speed"),
    (["--out", "card.csv"], "--out"),
    (["--methods", "nonsense"], "nonsense"),
])
def test_bad_input_gets_one_line(tiny, isolated_cache, extra, message, capsys):
    assert cli.main(tiny + extra) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_protocol_paper_003_runs_the_thesis_checks_and_says_so(tiny, isolated_cache, capsys):
    """--protocol paper-003: the thesis's comprehensiveness on the known-feature task, named by what it runs, the
    protocol in the card (JSON and text)."""
    model, data = tiny[2], tiny[4]
    args = ["report-card", "--model", model, "--dataset", data, "--quick", "--methods", "saliency",
            "--checks", "faithfulness", "--protocol", "paper-003", "--known-feature-model", model,
            "--known-feature-dataset", data]
    assert cli.main(args + ["--json"]) == 0
    card = json.loads(capsys.readouterr().out)
    assert card["protocol"] == "paper-003" and card["config"]["protocol"] == "paper-003"
    (rule,) = card["rules"]
    assert rule["metric"] == "comprehensiveness-003-code" and "Def. 2.2" in rule["label"]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "paper 003's protocol" in out and "known-feature task" in out


def test_an_unknown_protocol_is_refused_with_the_choices(tiny, isolated_cache, capsys):
    with pytest.raises(SystemExit) as stopped:
        cli.main(tiny + ["--protocol", "paper-999"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "invalid choice: 'paper-999'" in err and "paper-003" in err
    assert "Traceback" not in err


def test_a_csv_that_is_no_dataset_is_refused_before_any_run(tiny, isolated_cache, tmp_path, capsys):
    """a readable .csv without a 'text' column stops at its header, naming the column, quoting nothing."""
    from evaluation.runs.store import ResultStore
    from evaluation.suite.report_card import KIND

    table = tmp_path / "accounts.csv"
    table.write_text("user,password\nalice,hunter2\n")
    assert cli.main(tiny + ["--dataset", f"file:{table}"]) == 2
    err = capsys.readouterr().err
    assert "'text' column is required" in err and "accounts.csv" in err and "hunter2" not in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert ResultStore().list_runs(KIND) == []
