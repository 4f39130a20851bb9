"""The reproduce flags: one meaning of --seeds in every command (a count or a list; one seed is --seed), paper 002's
top-p binarization on the command line as on the Plausibility page, and docs/paper-003.md's Probability Change sign
as the code computes it."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tiny_models import FILLER, KEYWORD

import cli
from explainers import ParamError

ROOT = Path(__file__).resolve().parents[2]


def _sanity(*flags):
    from commands import sanity

    return sanity._seeds(cli.build_parser().parse_args(["sanity", "--check", "head", *flags]))


def test_seeds_is_a_count_or_a_list_in_sanity_as_in_roar(monkeypatch):
    from commands import roar

    assert _sanity("--seeds", "3") == [0, 1, 2]  # was the single seed 3
    assert _sanity("--seeds", "0,4,7") == [0, 4, 7]
    assert _sanity("--seed", "3") == [3]  # the single seed has its own spelling
    assert _sanity() == [0, 1, 2]  # paper 000's three
    seen = {}
    monkeypatch.setattr(roar, "build_config", lambda **kwargs: seen.update(kwargs))  # only the parsing is tested
    roar.config_from_args(cli.build_parser().parse_args(["roar", "--seeds", "3"]))
    assert seen["seeds"] == _sanity("--seeds", "3")
    with pytest.raises(ParamError, match="not both"):
        _sanity("--seeds", "2", "--seed", "5")


def test_repeat_seeds_and_a_bad_seed_list_get_a_message(capsys):
    from commands import sanity

    assert sanity._repeat_seeds("5") == [0, 1, 2, 3, 4] and sanity._repeat_seeds("2,9") == [2, 9]
    # refused before any model is loaded or built: a model that does not exist is never looked at
    assert cli.main(["sanity", "--text", "a fine film", "--check", "layers", "--seeds", "3",
                     "--methods", "attention", "--model", "no-such-model"]) == 2
    assert "--seed N" in capsys.readouterr().err


@pytest.fixture()
def keyword_run(keyword_classifier, tmp_path, isolated_cache):
    folder = tmp_path / "keyword-model"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    rows = []
    for i in range(6):
        words = [FILLER[(3 * i + j) % len(FILLER)] for j in range(5)]
        if i % 2:
            words.insert(2, KEYWORD)
        rationale = " ".join(f"*{w}*" if w == KEYWORD else w for w in words) if i % 2 else "[]"
        rows.append({"text": " ".join(words), "label": i % 2, "rationale": rationale})
    data = tmp_path / "keyword.jsonl"
    data.write_text("\n".join(json.dumps(row) for row in rows))
    return str(folder), f"file:{data}"


def test_evaluate_applies_paper_002_top_p_on_the_command_line(keyword_run, capsys):
    from evaluation.plausibility.dataset import run_report
    from evaluation.runs.store import ResultStore

    folder, data = keyword_run
    assert cli.main(["evaluate", "--model", folder, "--dataset", data, "--methods", "leave_one_out",
                     "--metrics", "plausibility", "--plausibility-preset", "paper002-top-p", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {(r["method"], r["metric"]): r for r in report["summary"]}
    assert ("leave_one_out", "plaus_token_f1_topp") in rows
    assert not any(metric.endswith("_topk") for _, metric in rows)  # the top-20 % binarization is not reported
    # the page's report of the same stored run gives the same number
    page = {(r["method"], r["metric"]): r for r in run_report(ResultStore(), report["run_id"])["metrics"]}
    assert page[("leave_one_out", "plaus_token_f1_topp")]["mean"] == pytest.approx(
        rows[("leave_one_out", "plaus_token_f1_topp")]["mean"], rel=1e-12)


def test_probability_change_sign_in_the_paper_003_page_is_the_codes():
    from evaluation.adversarial.measures import probability_change

    text = (ROOT / "docs" / "paper-003.md").read_text()
    header = re.search(r"Probability Change \(predicted-class probability, (.*?)\):", text.replace("\n", " "))
    assert header is not None, "docs/paper-003.md lost its Probability Change header"
    assert "original minus attacked" in header.group(1) and "positive = the attack lowered" in header.group(1)
    assert probability_change(0.9, 0.6) == pytest.approx(0.3)  # original 0.9, attacked 0.6: positive, lowered
