"""The Report card page with AppTest on the tiny keyword model saved to a folder: the card built as a background
job, the verdict table coloured by verdict with every rule shown, the ordering with its reasoning, both downloads,
and two models' orderings side by side."""
from __future__ import annotations

import pytest
from conftest import ROOT
from report_card_fixtures import write_rationale_csv
from roar_fixtures import save_keyword_model
from streamlit.testing.v1 import AppTest

from evaluation.runs.jobs import JOBS
from evaluation.suite import report_card as rc
from evaluation.suite import report_card_rules as rcr
from evaluation.suite.report_card_html import COLOURS

PAGE = "app_pages/12_Report_card.py"
CHECKS = ["faithfulness", "adversarial", "plausibility"]


@pytest.fixture()
def keyword_setup(keyword_classifier, isolated_cache, tmp_path, monkeypatch):
    folder = save_keyword_model(keyword_classifier, tmp_path / "keyword-model")
    data = write_rationale_csv(tmp_path / "keyword.csv", 4, seed=3)
    monkeypatch.setenv("EXWB_MODEL", str(folder))
    return str(folder), data


def _open(data: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"]
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    at.text_input(key="card-dataset").input(data).run()
    at.multiselect(key="card-methods").set_value(["saliency", "leave_one_out"]).run()
    at.multiselect(key="card-checks").set_value(CHECKS).run()
    at.toggle(key="card-quick").set_value(True).run()
    assert not at.exception, at.exception
    return at


def _build(at) -> str:
    at.button(key="card-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run_id = at.session_state["report_card_run"]
    JOBS.wait(run_id, timeout=240)
    assert not JOBS.is_running(run_id)
    at.run()
    assert not at.exception, at.exception
    return run_id


def test_the_card_is_built_in_the_background_and_shown_with_its_rules(keyword_setup):
    folder, data = keyword_setup
    at = _open(data)
    run_id = _build(at)
    card = rc.card_from_store(rc.ResultStore(), run_id)
    assert [r["check"] for r in card["rules"]] == CHECKS and not card["errors"]
    table = at.dataframe[0]
    frame = table.value
    assert list(frame.index) == ["saliency", "leave_one_out"]
    names = {c: rcr.check_name(c, "default", data) for c in CHECKS}  # each check named by what it runs
    assert list(frame.columns) == [names[c] for c in CHECKS] and "ERASER AOPC" in names["faithfulness"]
    by = {(r["method"], r["check"]): r for r in card["rows"]}
    assert frame.loc["leave_one_out", names["adversarial"]] == rcr.NOT_APPLICABLE
    assert frame.loc["saliency", names["plausibility"]].startswith(by[("saliency", "plausibility")]["verdict"])
    styles = table.proto.arrow_data.styler.styles  # the colour of each verdict
    assert COLOURS[rcr.NOT_APPLICABLE] in styles
    captions = "\n".join(c.value for c in at.caption)
    for check in CHECKS:
        assert rcr.RULES[check].text in captions
    assert card["ordering_rule"] in captions
    order = next(df.value for df in at.dataframe if "reasoning" in df.value.columns)
    assert list(order["reasoning"]) == [o["reasoning"] for o in card["ordering"]]
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download JSON", "Download HTML"]


def test_two_models_cards_side_by_side(keyword_setup, random_classifier, tmp_path, monkeypatch):
    folder, data = keyword_setup
    at = _open(data)
    first = _build(at)
    other = save_keyword_model(random_classifier, tmp_path / "random-model")
    monkeypatch.setenv("EXWB_MODEL", str(other))
    at = _open(data)
    second = _build(at)
    assert second != first
    at.multiselect(key="card-compare").set_value([first, second]).run()
    assert not at.exception, at.exception
    side = [df.value for df in at.dataframe if list(df.value.columns) == ["rank", "method", "passes", "fails"]]
    assert len(side) == 2 and all(set(frame["method"]) == {"saliency", "leave_one_out"} for frame in side)


def test_the_paper_003_protocol_is_chosen_in_a_selectbox_and_names_its_checks(keyword_setup):
    folder, data = keyword_setup
    at = _open(data)
    at.selectbox(key="card-protocol").set_value("paper-003").run()
    options = at.multiselect(key="card-checks").options
    assert any("Def. 2.2" in o and "known-feature task" in o for o in options)
    assert any("N(0, 1)" in o for o in options)
    at.multiselect(key="card-checks").set_value(["faithfulness"]).run()
    at.text_input(key="card-kf-model").input(folder).run()
    at.text_input(key="card-kf-data").input(data).run()
    run_id = _build(at)
    card = rc.card_from_store(rc.ResultStore(), run_id)
    assert card["protocol"] == "paper-003" and card["rules"][0]["metric"] == "comprehensiveness-003-code"
    assert list(at.dataframe[0].value.columns) == [rcr.check_name("faithfulness", "paper-003", data)]
    assert any("protocol `paper-003`" in c.value for c in at.caption)
