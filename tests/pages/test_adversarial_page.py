"""The Adversarial page with AppTest on the real quick classifier: attack one input live, read the
measures and both heatmaps; a bad option and a too-short input get messages, never a traceback."""
from __future__ import annotations

import pytest
from page_support import open_with_text
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/10_Adversarial.py"
TEXT = "the acting is superb , but the plot is dull and the ending drags on far too long"


def _open(monkeypatch, text: str = TEXT) -> AppTest:
    return open_with_text(monkeypatch, PAGE, text)


def _finish(at: AppTest) -> None:
    for job in at.session_state["adversarial_live"].values():
        job.wait(120)
    at.run()
    assert not at.exception, at.exception


def test_attack_one_input_shows_measures_and_both_heatmaps(monkeypatch, quick_classifier):
    at = _open(monkeypatch)
    assert [t.value for t in at.title] == ["Adversarial attacks on explanations"]
    at.number_input(key="adv-paper-003-steps").set_value(6).run()
    button = next(b for b in at.button if b.label.startswith("Attack (up to 6 steps"))
    button.click().run()
    _finish(at)
    assert not at.error, [e.value for e in at.error]
    measures = next(df.value for df in at.dataframe if "measure" in df.value.columns)
    values = dict(zip(measures["measure"], measures["value"]))
    assert 0.0 <= values["Rank Change"] <= 1.0 and values["Class kept"] == 1.0
    page = "\n".join(element.proto.body for element in at.get("markdown"))
    assert "Clean explanation" in page and "Attacked explanation" in page and "superb" in page
    assert any(b.label == "Download this attack (JSON)" for b in at.get("download_button"))


def test_a_too_short_input_gets_a_message(monkeypatch, quick_classifier):
    at = _open(monkeypatch, text="superb film")
    at.number_input(key="adv-paper-003-steps").set_value(3).run()
    next(b for b in at.button if b.label.startswith("Attack")).click().run()
    _finish(at)
    assert any("rounds to 0" in e.value for e in at.error)
