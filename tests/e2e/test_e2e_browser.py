"""End to end in a real browser: the real Streamlit server, headless Debian Chromium driven by Playwright.

Saves screenshots to artifacts/ (the README shows one). Chromium comes from Debian (`make test` installs it);
Playwright never downloads a browser.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
ARTIFACTS = ROOT / "artifacts"

pytestmark = [pytest.mark.e2e, pytest.mark.integration]
if CHROMIUM is None:
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed (make test installs it)"))


@pytest.fixture(scope="module")
def server(quick_classifier):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "EXWB_MODEL": "default-quick", "EXWB_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "OMP_WAIT_POLICY": "PASSIVE"}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "e2e-server.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                "--server.port", str(port), "--server.address", "127.0.0.1",
                                "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    for _ in range(300):
        try:
            if urllib.request.urlopen(url + "_stcore/health", timeout=1).read() == b"ok":
                break
        except OSError:
            time.sleep(0.2)
    else:
        process.terminate()
        pytest.fail("the Streamlit server did not become healthy; see artifacts/e2e-server.log")
    yield url
    process.terminate()
    process.wait(20)
    log.close()


@pytest.fixture()
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(server)
        yield page
        assert not errors, f"JavaScript errors in the page: {errors}"
        browser.close()


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
