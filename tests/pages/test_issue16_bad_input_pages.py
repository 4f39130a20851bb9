"""The paper-003 pages (Compare models, Report card, Adversarial) with bad input, on the tiny keyword model saved to a
folder: an unknown model, one model only, empty text and a folder the code cannot read each get a one-line message,
never a traceback."""
from __future__ import annotations

import pytest
from conftest import ROOT
from roar_fixtures import save_keyword_model
from streamlit.testing.v1 import AppTest

COMPARE = "app_pages/11_Compare_models.py"
CARD = "app_pages/12_Report_card.py"
ATTACK = "app_pages/10_Adversarial.py"
TEXT = "the acting is superb but the plot is dull"


@pytest.fixture()
def folders(keyword_classifier, isolated_cache, tmp_path, monkeypatch):
    """A readable model folder (the sidebar's model) and one the code cannot read (a config of no known
    architecture, no tokenizer)."""
    good = save_keyword_model(keyword_classifier, tmp_path / "keyword-model")
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "no-such-architecture"}')
    monkeypatch.setenv("EXWB_MODEL", str(good))
    return str(good), str(broken)


def _open(page: str, text: str | None = TEXT) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"]
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    if text is not None:
        at.radio(key="input_source").set_value("Your text").run()
        at.text_area(key="text").input(text).run()
    assert not at.exception, at.exception
    return at


def _one_line_errors(at: AppTest) -> list[str]:
    assert not at.exception, at.exception
    messages = [e.value for e in at.error]
    assert all("\n" not in m and "Traceback" not in m for m in messages), messages
    return messages


@pytest.mark.parametrize("extra, expected", [
    ("no-such-model", "not a built-in model"),
    ("BROKEN", "Cannot load"),
])
def test_compare_one_input_with_a_model_it_cannot_use(folders, extra, expected):
    good, broken = folders
    at = _open(COMPARE)
    at.multiselect(key="cmp-methods").set_value(["saliency"]).run()
    at.multiselect(key="cmp-models").set_value([]).run()
    at.text_input(key="cmp-extra").input(broken if extra == "BROKEN" else extra).run()
    errors = _one_line_errors(at)
    assert any(expected in m for m in errors), errors
    # the one model left is not compared with itself
    assert any("at least one more model" in i.value for i in at.info)


def test_compare_with_empty_text_gets_a_message(folders, random_classifier, tmp_path):
    other = save_keyword_model(random_classifier, tmp_path / "random-model")
    at = _open(COMPARE, text="   ")
    at.multiselect(key="cmp-methods").set_value(["saliency"]).run()
    at.multiselect(key="cmp-models").set_value([]).run()
    at.text_input(key="cmp-extra").input(str(other)).run()
    errors = _one_line_errors(at)
    assert any("The text is empty" in m for m in errors), errors


@pytest.mark.parametrize("extra, expected", [
    ("no-such-model", "not a built-in model"),
    ("BROKEN", "Cannot load"),
])
def test_compare_dataset_level_with_a_model_it_cannot_use(folders, extra, expected):
    good, broken = folders
    at = _open(COMPARE)
    at.multiselect(key="cmp-models").set_value([]).run()
    at.multiselect(key="cmpd-models").set_value([good]).run()
    at.text_input(key="cmpd-extra").input(broken if extra == "BROKEN" else extra).run()
    at.multiselect(key="cmpd-checks").set_value(["faithfulness"]).run()
    at.button(key="cmpd-start").click().run()
    errors = _one_line_errors(at)
    assert any(expected in m for m in errors), errors
    assert "model_comparison_run" not in at.session_state


@pytest.mark.parametrize("page", [CARD, ATTACK])
@pytest.mark.parametrize("model, expected", [
    ("no-such-model", "not a built-in model"),
    ("BROKEN", "Cannot load"),
])
def test_card_and_attack_pages_with_a_model_they_cannot_use(folders, monkeypatch, page, model, expected):
    good, broken = folders
    monkeypatch.setenv("EXWB_MODEL", broken if model == "BROKEN" else model)
    at = _open(page, text=None)
    errors = _one_line_errors(at)
    assert any(expected in m for m in errors), errors
    assert any("Pick a prepared model" in i.value for i in at.info)
