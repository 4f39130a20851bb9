"""The Guided tour on a long document, AppTest on the real default-quick model: the text is read whole in
windows (no cut) and the method step draws every word of the document (strip, folded sentences)."""
from __future__ import annotations

import pytest
from conftest import ROOT
from page_waits import drawn_after_run
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/9_Guided_tour.py"
TEXT = " ".join(f"the film number {i} was long and slow but the ending was fine ." for i in range(40))  # 560 words


@pytest.fixture()
def page_env(quick_classifier, monkeypatch):
    from explainers import cache

    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    yield
    cache.DEFAULT_CACHE.clear()


def test_the_tour_explains_and_draws_the_whole_document(page_env):
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=400)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update({"model": "default-quick", "text": TEXT, "step": "method", "method": "saliency"})
    at.run()
    assert not at.exception, at.exception
    assert any("560 words read whole in" in c.value for c in at.caption), [c.value for c in at.caption]
    assert not any("were cut" in w.value for w in at.warning)
    at.toggle(key="tour-teacher").set_value(True).run()
    html = drawn_after_run(at)  # a document's saliency may wait for a Run click on a slow CPU
    assert 'class="xw-strip"' in html and html.count("<details") == 40
    assert 'title="39: ' in html and "sentence 40 (words 547-560)" in html  # the last window's words too
