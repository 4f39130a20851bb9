"""End to end (issue 20): a user file whose label matches no label of the model, opened from the sidebar in a real
browser, gets a one-line message naming the user's file, the row and the labels to use; a correct file with
differently capitalised names then opens with the model's labels. The real Streamlit server and headless Debian
Chromium, started as in test_e2e_browser.py, on a cache folder of its own (uploads are written there; the
prepared models are linked in)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from conftest import ROOT
from test_e2e_browser import ARTIFACTS, CHROMIUM, FLAGS

pytestmark = [pytest.mark.e2e, pytest.mark.integration]
if CHROMIUM is None:
    pytestmark.append(pytest.mark.skip(reason="Debian chromium is not installed (make test installs it)"))


@pytest.fixture(scope="module")
def server(quick_classifier, tmp_path_factory):
    from models.prepare import find_prepared

    cache = tmp_path_factory.mktemp("e2e-bad-input-cache")
    (cache / "models").mkdir()
    real = find_prepared("default-quick")
    (cache / "models" / real.name).symlink_to(real, target_is_directory=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "EXWB_MODEL": "default-quick", "EXWB_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "OMP_WAIT_POLICY": "PASSIVE", "EXWB_CACHE_DIR": str(cache)}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "e2e-bad-input-server.log", "w")
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
        pytest.fail("the Streamlit server did not become healthy; see artifacts/e2e-bad-input-server.log")
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


def _open_your_file(page) -> None:
    from playwright.sync_api import expect

    expect(page.locator(".xw-row").first).to_be_visible(timeout=120_000)  # cold start
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Dataset", exact=True).first.click()
    dataset = sidebar.locator('[data-testid="stSelectbox"]').filter(has_text="Dataset").first
    expect(dataset).to_be_visible(timeout=60_000)
    dataset.click()
    page.get_by_role("option", name="your file (CSV / JSONL)").click()
    expect(sidebar.locator('input[type="file"]')).to_have_count(1, timeout=60_000)


def test_a_label_the_model_does_not_have_gets_a_message_naming_the_file(page, tmp_path):
    from playwright.sync_api import expect

    mislabelled = tmp_path / "my reviews.csv"
    mislabelled.write_text("text,label\na warm and funny film,positive\na dull plot,negatve\n")
    _open_your_file(page)
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(mislabelled))
    message = page.locator('[data-testid="stAlert"]').filter(has_text="matches none of the model's labels")
    expect(message).to_be_visible(timeout=60_000)
    text = message.inner_text()
    assert text.startswith("my reviews.csv: 1 malformed row(s): row 2: label 'negatve' matches none of the model's "
                           "labels (negative, positive; or a class index 0-1) (line 3)"), text
    assert "uploads" not in text and ".csv" in text
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
    page.screenshot(path=str(ARTIFACTS / "e2e-bad-input.png"))

    # the same rows with the names capitalised otherwise: read with the model's labels, gold shown by name
    fixed = tmp_path / "fixed.csv"
    fixed.write_text("text,label\na warm and funny film,POSITIVE\na dull plot,Negative\n")
    page.locator('[data-testid="stSidebar"] input[type="file"]').set_input_files(str(fixed))
    expect(page.locator('[data-testid="stSidebar"]').get_by_text("gold: positive")).to_be_visible(timeout=60_000)
    expect(page.locator(".xw-row").first).to_contain_text("funny", timeout=120_000)
