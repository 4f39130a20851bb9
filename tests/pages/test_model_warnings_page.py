"""The Heatmaps page shows, next to each explanation, the warnings about the model (an untrained head) and the input
(words read as [UNK]). AppTest with a tiny model saved in the test, no prepared model needed."""
from __future__ import annotations

from conftest import ROOT
from streamlit.testing.v1 import AppTest
from tiny_models import tiny_bert, tiny_tokenizer


def test_untrained_head_and_unknown_words_are_warned_about_on_the_page(tmp_path, monkeypatch):
    from explainers import cache

    folder = tmp_path / "untrained-head"
    tiny_bert().save_pretrained(folder)  # a classification head that was never trained
    tiny_tokenizer().save_pretrained(folder)
    monkeypatch.setenv("EXWB_MODEL", str(folder))
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = "the movie was excellent 😀"
    at.session_state["keep:methods"] = ["leave_one_out"]
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    at.run()
    assert not at.exception, at.exception
    warnings = [w.value for w in at.warning]
    assert any("head looks untrained" in w for w in warnings), warnings
    assert any("read as [UNK]: '😀'" in w for w in warnings), warnings
    sidebar = [w.value for w in at.sidebar.warning]  # the model warning also sits under the model, on every page
    assert any("head looks untrained" in w for w in sidebar), sidebar
    cache.DEFAULT_CACHE.clear()
