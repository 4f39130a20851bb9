"""Every page where AML can be picked offers to build its missing attribution model, as the Heatmaps page does
(mask learning): picking AML without a checkpoint shows the offer (the same build widget), never an error, and the
page goes on with the other methods. AppTest with the real default-quick model, in a cache without any AML."""
from __future__ import annotations

import pytest
from conftest import ROOT

pytestmark = pytest.mark.integration

TEXT = "the acting is superb but the plot is thin"
AML = "AML (attributive masking learning)"
OFFER = f"{AML} needs an attribution model"
BUILD = "Build the attribution model (about "


@pytest.fixture()
def cache_without_aml(quick_cache, monkeypatch):
    """A cache folder holding only the prepared default-quick (linked); explanations cached in memory only."""
    from explainers import cache

    models = quick_cache
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    yield models
    cache.DEFAULT_CACHE.clear()


def open_page(page: str, **state):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = TEXT
    at.session_state["methods"] = ["random"]  # the first page explains only the random baseline
    at.run()
    at.switch_page(page)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize("page, state", [
    ("app_pages/5_Plausibility.py", {"plaus-methods": ["aml", "random"]}),
    ("app_pages/2_Faithfulness.py", {"faith-methods": ["aml", "random"], "faith-metrics": ["eraser"]}),
    ("app_pages/3_Sanity_checks.py", {"sanity-methods": ["aml", "random"]}),
    ("app_pages/4_ROAR.py", {"roar-measures-(choose below)": ["aml"]}),
])
def test_picking_aml_without_an_attribution_model_offers_to_build_it(cache_without_aml, page, state):
    at = open_page(page, **state)
    offers = [i.value for i in at.info if i.value.startswith(OFFER)]
    assert len(offers) == 1 and "Comprehensiveness (AOPC)" in offers[0] and "none exists yet" in offers[0]
    assert [b.label for b in at.button if b.label.startswith(BUILD)] != []
    assert not at.error, [e.value for e in at.error]
    assert not [f for f in cache_without_aml.iterdir() if f.name.startswith("aml-")]  # nothing built before a click
