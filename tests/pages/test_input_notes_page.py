"""The app reads typed input as written: an invisible character inside a word is removed and both the
sidebar and the explanation say so; a sentence pair with an empty hypothesis gets a message, not a single-sentence
explanation. AppTest with the tiny keyword model saved in the test, no prepared model needed."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest
from tiny_models import tiny_tokenizer


@pytest.fixture()
def app(keyword_classifier, tmp_path, monkeypatch):
    from explainers import cache

    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    monkeypatch.setenv("EXWB_MODEL", str(folder))
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:methods"] = ["leave_one_out"]
    yield at
    cache.DEFAULT_CACHE.clear()


def _open_heatmaps(at):
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    at.run()
    assert not at.exception, at.exception


def test_an_invisible_character_is_removed_and_the_sidebar_and_the_explanation_say_so(app):
    app.session_state["keep:input_source"] = "Your text"
    app.session_state["keep:text"] = "the movie was excel\u200blent"
    _open_heatmaps(app)
    note = "Removed 1 invisible character (U+200B zero width space) before tokenization"
    assert any(note in c.value for c in app.sidebar.caption), [c.value for c in app.sidebar.caption]
    assert any(note in w.value for w in app.warning), [w.value for w in app.warning]
    html = "\n".join(element.proto.body for element in app.get("html"))
    assert "excellent" in html and "excel<" not in html


def test_a_pair_with_an_empty_hypothesis_gets_a_message(app):
    app.session_state["keep:input_source"] = "Sentence pair"
    app.session_state["keep:pair_text"] = "a man sleeps"
    app.session_state["keep:pair_second"] = "   "
    _open_heatmaps(app)
    assert any("The second segment (the hypothesis) is empty" in w.value for w in app.warning), \
        [w.value for w in app.warning]
    assert not any('class="xw-row"' in element.proto.body for element in app.get("html"))
