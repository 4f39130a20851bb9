"""The Heatmaps page's reruns stay cheap: the method settings draw their widgets only while their panel is
open, one method at a time, and every method keeps its settings while its widgets are not drawn; the panels that
build tables or figures (compact matrix, agreement values, explanation shape) build them only while open; the
cached figures follow what they show. AppTest with the real default-quick model."""
from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.integration

from conftest import ROOT

SHORT_EXAMPLE = 2  # "not bad at all , actually ." (assets/examples.json)
SETTING_WIDGETS = ("selectbox", "number_input", "checkbox", "text_input")


@pytest.fixture(scope="module")
def page_env(quick_classifier):
    """default-quick as the app's model; explanations cached in memory only."""
    from explainers import cache

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_MODEL", "default-quick")
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        cache.DEFAULT_CACHE.clear()
        yield
        cache.DEFAULT_CACHE.clear()


def open_page(methods):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:example_index"] = SHORT_EXAMPLE
    at.session_state["keep:methods"] = list(methods)
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    rerun(at)
    return at


def rerun(at, **state):
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]


def setting_keys(at) -> list[str]:
    """The keys of the method-settings widgets on the page (the picker's keys start with "methods-")."""
    return sorted(w.key for kind in SETTING_WIDGETS for w in at.main.get(kind)
                  if w.key and w.key.startswith("methods-"))


def explanation(at, method_id: str):
    return next(e for e in at.session_state["heatmaps:export"].explanations if e.method_id == method_id)


def test_a_closed_settings_panel_draws_no_widget_and_an_open_one_those_of_one_method(page_env):
    at = open_page(["saliency", "occlusion", "lime"])
    assert setting_keys(at) == []  # closed (it used to draw every parameter of every chosen method)
    assert any(e.label.startswith("Method settings") for e in at.expander)
    rerun(at, **{"methods-settings": True})
    shown = setting_keys(at)
    assert "methods-settings-of" in shown and "methods-saliency-preset" in shown
    assert {k.split("-")[1] for k in shown if k != "methods-settings-of"} == {"saliency"}
    rerun(at, **{"methods-settings-of": "lime"})
    assert {k.split("-")[1] for k in setting_keys(at) if k != "methods-settings-of"} == {"lime"}


def test_settings_are_kept_while_their_widgets_are_not_drawn(page_env):
    at = open_page(["saliency", "lime"])
    assert explanation(at, "lime").provenance["params"]["n_samples"] == 200
    rerun(at, **{"methods-settings": True, "methods-settings-of": "lime"})
    at.number_input(key="methods-lime-None-n_samples").set_value(40)
    rerun(at)
    assert explanation(at, "lime").provenance["params"]["n_samples"] == 40
    changed = [c.value for c in at.caption if c.value.startswith("Changed settings: ")]
    assert changed == ["Changed settings: LIME: `n_samples=40`"]
    # another method's settings, then the panel closed: LIME's widgets are gone, its setting is not
    rerun(at, **{"methods-settings-of": "saliency"})
    assert "methods-lime-None-n_samples" not in setting_keys(at)
    assert explanation(at, "lime").provenance["params"]["n_samples"] == 40
    rerun(at, **{"methods-settings": False})
    assert setting_keys(at) == []
    assert explanation(at, "lime").provenance["params"]["n_samples"] == 40
    assert [c.value for c in at.caption if c.value.startswith("Changed settings: ")] == changed
    # opened again on LIME: the widget starts from the kept value
    rerun(at, **{"methods-settings": True, "methods-settings-of": "lime"})
    assert at.number_input(key="methods-lime-None-n_samples").value == 40


def test_a_preset_starts_from_its_own_values(page_env):
    at = open_page(["saliency", "lime"])
    rerun(at, **{"methods-settings": True, "methods-settings-of": "lime"})
    at.number_input(key="methods-lime-None-n_samples").set_value(40)
    rerun(at)
    at.selectbox(key="methods-lime-preset").set_value("paper-003")
    rerun(at)
    assert at.number_input(key="methods-lime-paper-003-n_samples").value == 200  # not the 40 set without a preset
    # (paper-003's values are LIME's defaults, so the cache may serve the explanation computed without a preset)
    assert explanation(at, "lime").provenance["params"]["n_samples"] == 200
    assert [c.value for c in at.caption if c.value.startswith("Changed settings: ")] == [
        "Changed settings: LIME: preset `paper-003`"]


def test_panels_build_their_tables_and_figures_only_while_open(page_env):
    at = open_page(["saliency", "leave_one_out", "attention"])
    charts = [c.proto.id for c in at.get("plotly_chart")]
    assert not [c for c in charts if "matrix-chart" in c]
    assert not [d for d in at.dataframe if "Saliency (gradient)" in d.value.columns]  # the agreement values table
    rerun(at, **{"matrix-open": True, "agreement-values-open": True, "agreement-shape-open": True})
    assert [c for c in at.get("plotly_chart") if "matrix-chart" in c.proto.id]
    assert [d for d in at.dataframe if "Saliency (gradient)" in d.value.columns]
    assert [d for d in at.dataframe if "Sparseness (Gini) ↑" in d.value.columns]


def test_the_cached_agreement_figure_follows_what_it_shows(page_env):
    at = open_page(["saliency", "leave_one_out", "attention"])

    def title() -> str:
        chart = next(c for c in at.get("plotly_chart") if "agreement-chart" in c.proto.id)
        return json.loads(chart.proto.spec)["layout"]["title"]["text"]

    assert "(|score|" in title()
    at.toggle(key="agreement-abs").set_value(False)
    rerun(at)
    assert "(signed scores" in title()
    at.radio(key="agreement-measure").set_value("feature")
    rerun(at, **{"agreement-k": 2})
    assert title().startswith("Feature agreement @2")
