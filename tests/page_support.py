"""Opening a page of the real app with AppTest on the prepared quick model and a typed text (the page tests' common
first steps)."""
from __future__ import annotations

from conftest import ROOT
from streamlit.testing.v1 import AppTest


def open_with_text(monkeypatch, page: str, text: str) -> AppTest:
    """``page`` (e.g. "app_pages/10_Adversarial.py") of the app on default-quick, the Random method chosen (cheap),
    ``text`` typed as the input; fails on any exception along the way."""
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"]
    at.run()
    at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(text).run()
    assert not at.exception, at.exception
    return at
