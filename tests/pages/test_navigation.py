"""Navigation with AppTest: a page opened by its link before the entry point ever ran (a deep link after a server
start) gets the same navigation, layout, title and shipped favicon as a page reached from the app."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.local_script_runner import LocalScriptRunner

import settings

PAGE_TITLES = ["Heatmaps", "Faithfulness", "Sanity checks", "ROAR", "Plausibility", "Counterfactuals",
               "Error analysis", "Method cards", "Guided tour", "Adversarial", "Compare models", "Report card", "Jobs",
               "Reproduce"]
HEADINGS = {"1_Heatmaps.py": "Heatmaps", "2_Faithfulness.py": "Faithfulness", "3_Sanity_checks.py": "Sanity checks",
            "4_ROAR.py": "ROAR: remove and retrain", "5_Plausibility.py": "Plausibility",
            "6_Counterfactuals.py": "Masked-LM counterfactuals", "7_Error_analysis.py": "Error analysis",
            "8_Method_cards.py": "Method cards", "9_Guided_tour.py": "Guided tour",
            "10_Adversarial.py": "Adversarial attacks on explanations", "11_Compare_models.py": "Compare models",
            "13_Jobs.py": "Jobs",
            "12_Report_card.py": "Report card",
            "14_Reproduce.py": "Reproduce the papers"}


@pytest.fixture()
def sent(monkeypatch) -> list:
    """Every message the app sends to the browser (recorded as the real script runner hands them over)."""
    messages: list = []
    original = LocalScriptRunner.forward_msgs

    def recording(self):
        found = original(self)
        messages.extend(found)
        return found

    monkeypatch.setattr(LocalScriptRunner, "forward_msgs", recording)
    return messages


def test_a_fresh_server_never_takes_the_page_scripts_for_a_pages_folder_app():
    """Streamlit decides once per process, before the entry point runs, whether the app is a 'pages/ folder' app;
    if it is, a deep link runs the page script alone (an extra 'app' entry, no page config)."""
    before = PagesManager.uses_pages_directory
    try:
        PagesManager.uses_pages_directory = None
        PagesManager(str(ROOT / "app.py"))
        assert PagesManager.uses_pages_directory is False
    finally:
        PagesManager.uses_pages_directory = before


@pytest.mark.parametrize("page", sorted(HEADINGS))
def test_a_deep_link_before_the_first_run_gets_the_apps_navigation_and_config(page, sent, monkeypatch,
                                                                              isolated_cache):
    monkeypatch.setenv("EXWB_MODEL", "default-quick")  # not prepared in the isolated cache: the page stops early
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page(f"app_pages/{page}")
    at.run()
    assert not at.exception, at.exception
    navigation = [m.navigation for m in sent if m.WhichOneof("type") == "navigation"]
    assert navigation, "the app's st.navigation ran"
    assert [p.page_name for p in navigation[-1].app_pages] == PAGE_TITLES  # no extra 'app' entry
    configs = [m.page_config_changed for m in sent if m.WhichOneof("type") == "page_config_changed"]
    assert configs and configs[-1].title == settings.PRODUCT
    assert configs[-1].layout == configs[-1].WIDE
    favicon = configs[-1].favicon
    assert favicon.startswith("/") and not favicon.startswith("//"), "a file the app serves, not a web address"
    assert [t.value for t in at.title][:1] == [HEADINGS[page]]  # the linked page, not the first one
