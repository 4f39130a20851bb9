"""End to end in a real browser: the real Streamlit server, headless Debian Chromium driven by Playwright.

Saves screenshots to artifacts/ (the README shows one). Server and browser start in e2e_support.py.
"""
from __future__ import annotations

import pytest
from e2e_support import ARTIFACTS, MARKS, browser_page, streamlit_server

pytestmark = MARKS


@pytest.fixture(scope="module")
def server(quick_classifier):
    with streamlit_server("e2e-server.log") as url:
        yield url


@pytest.fixture()
def page(server):
    with browser_page(server) as page:
        yield page


def test_type_a_sentence_and_read_the_heatmaps(page):
    from playwright.sync_api import expect

    rows = page.locator(".xw-row")
    expect(rows.first).to_be_visible(timeout=120_000)  # cold start: imports, model load, first explanations
    page.locator('[data-testid="stSidebar"]').get_by_text("Your text", exact=True).click()
    box = page.get_by_label("Text", exact=True)
    expect(box).to_be_visible(timeout=30_000)
    box.fill("i loved this film but the plot was <b>boring</b>")
    box.press("Control+Enter")  # st.text_area commits on Ctrl+Enter or blur
    expect(rows.first).to_contain_text("loved", timeout=120_000)
    expect(rows.nth(4)).to_contain_text("boring", timeout=120_000)
    assert rows.count() >= 5
    # the HTML in the text is shown as text, not rendered
    expect(page.get_by_text("<b>boring</b>").first).to_be_visible()
    # a heatmap cell is coloured and carries its score
    cell = rows.first.locator(".xw-tok").filter(has_text="boring").first
    assert "rgba(" in (cell.get_attribute("style") or "")
    assert "boring" in (cell.get_attribute("title") or "")
    expect(page.get_by_text("Prediction:").first).to_be_visible()
    page.wait_for_timeout(500)
    page.screenshot(path=str(ARTIFACTS / "e2e-heatmaps.png"))


def test_provenance_opens_and_pages_navigate(page):
    from playwright.sync_api import expect

    expect(page.locator(".xw-row").first).to_be_visible(timeout=120_000)
    page.get_by_text("Provenance:").first.click()
    expect(page.locator('[data-testid="stJson"]').first).to_be_visible(timeout=30_000)
    links = page.locator('[data-testid="stSidebarNav"] a')
    assert links.count() >= 1
    if links.count() > 1:  # every other page opens without an exception and keeps the sidebar input
        for index in range(1, links.count()):
            links.nth(index).click()
            page.wait_for_timeout(1500)
            expect(page.locator('[data-testid="stException"]')).to_have_count(0, timeout=120_000)
        links.first.click()
        expect(page.locator(".xw-row").first).to_be_visible(timeout=120_000)
