"""The Heatmaps page on a long document, with AppTest on the real quick model: read whole in windows,
drawn as a strip and folded sentences, and sentences as players."""
from __future__ import annotations

import pytest
from conftest import ROOT
from page_waits import drawn_after_run
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

TEXT = " ".join(f"the film number {i} was long and slow but the ending was fine ." for i in range(50))  # 700 words


def test_a_long_document_is_read_whole_and_drawn_readably(monkeypatch, quick_classifier):
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=400)
    at.session_state["methods"] = ["saliency"]
    at.run()
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(TEXT).run()
    assert not at.exception, at.exception
    assert any("700 words read whole in" in c.value for c in at.caption), [c.value for c in at.caption]
    html = drawn_after_run(at)
    assert 'class="xw-strip"' in html and html.count("<details open>") == 3 and html.count("<details") == 50
    at.radio(key="granularity").set_value("sentence").run()
    assert not at.exception, at.exception
    html = drawn_after_run(at, 'title="the film number 7 ')
    assert "the film number 7 was long and slow but the ending was fine ." in html  # one unit per sentence


