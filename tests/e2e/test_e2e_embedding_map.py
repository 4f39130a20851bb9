"""The embedding map in a real browser: the one thing AppTest cannot drive is plotly's selection. Open Error
analysis on SST-2 dev, draw a lasso around the whole map, and the page narrows its rows to the selected points."""
from __future__ import annotations

import re

import pytest
from e2e_support import ARTIFACTS, MARKS, browser_page, streamlit_server

pytestmark = MARKS


@pytest.fixture(scope="module")
def server(quick_classifier):
    with streamlit_server("e2e-embedding-map-server.log") as url:
        yield url


def test_a_lasso_on_the_map_narrows_the_rows(server):
    from playwright.sync_api import expect

    with browser_page(server + "Error_analysis") as page:
        ready = page.get_by_text("Misclassified only")
        predict = page.get_by_role("button", name=re.compile("Predict all"))
        expect(ready.or_(predict).first).to_be_visible(timeout=240_000)
        if predict.count():
            predict.click()
        expect(ready).to_be_visible(timeout=300_000)
        map_button = page.get_by_role("button", name=re.compile("Map all"))
        chart = page.locator('[data-testid="stPlotlyChart"]').filter(has=page.locator(".scatterlayer")).first
        expect(chart.or_(map_button).first).to_be_visible(timeout=240_000)
        if map_button.count():
            map_button.click()
        expect(chart).to_be_visible(timeout=300_000)
        area = chart.locator(".nsewdrag").first.bounding_box()
        left, top = area["x"] + 2, area["y"] + 2
        right, bottom = area["x"] + area["width"] - 2, area["y"] + area["height"] - 2
        page.mouse.move(left, top)
        page.mouse.down()
        for x, y in ((right, top), (right, bottom), (left, bottom), (left, top + 1)):
            page.mouse.move(x, y, steps=8)
        page.mouse.up()
        expect(page.get_by_text(re.compile(r"872 point\(s\) selected, 872 of them"))).to_be_visible(timeout=120_000)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        page.screenshot(path=str(ARTIFACTS / "e2e-embedding-map.png"))
