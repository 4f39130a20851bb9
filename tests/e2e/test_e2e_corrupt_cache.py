"""End to end (issue 20): damaged explanation-cache entries for the very input the page then opens are recomputed,
and the page shows full heatmaps with no traceback. The real Streamlit server and headless Debian Chromium, started
as in test_e2e_browser.py, on a cache folder of their own (the prepared models are linked in)."""
from __future__ import annotations

import json
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

TEXT = "a gripping story with a dull ending"


def damaged_entries(classifier) -> dict:
    """The cache files the page will look up for TEXT (one per default method), each damaged in another way."""
    from explainers import create
    from explainers.cache import cache_key
    from ui.views.heatmaps import FOUNDATION_METHODS

    encoding = classifier.encode(TEXT)
    valid = create("leave_one_out").explain(classifier, encoding).to_dict()
    one_word = {**valid, "words": valid["words"][:1], "word_scores": valid["word_scores"][:1]}  # the 1-word heatmap
    damage = {"saliency": "[]", "input_x_gradient": json.dumps({"method_id": "input_x_gradient"}),
              "integrated_gradients": json.dumps(valid), "leave_one_out": json.dumps(one_word),
              "attention": json.dumps(valid)[:-30]}
    assert set(damage) == set(FOUNDATION_METHODS)
    return {method: (cache_key(classifier, encoding, create(method), None), text) for method, text in damage.items()}


@pytest.fixture(scope="module")
def damaged_server(quick_classifier, tmp_path_factory):
    from models.prepare import find_prepared

    cache = tmp_path_factory.mktemp("e2e-cache")
    (cache / "models").mkdir()
    real = find_prepared("default-quick")
    (cache / "models" / real.name).symlink_to(real, target_is_directory=True)
    entries = damaged_entries(quick_classifier)
    files = {}
    for method, (key, text) in entries.items():
        path = cache / "explanations" / key[:2] / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files[method] = path
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "EXWB_MODEL": "default-quick", "EXWB_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "OMP_WAIT_POLICY": "PASSIVE", "EXWB_CACHE_DIR": str(cache), "EXWB_DISK_CACHE": "1"}
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "e2e-corrupt-cache-server.log", "w")
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
        pytest.fail("the Streamlit server did not become healthy; see artifacts/e2e-corrupt-cache-server.log")
    yield url, files
    process.terminate()
    process.wait(20)
    log.close()


def test_damaged_cache_entries_are_recomputed_on_the_page(damaged_server, quick_classifier):
    from playwright.sync_api import expect, sync_playwright

    from explainers import create
    from explainers.cache import Request, problem_with
    from explainers.explanation import Explanation

    url, files = damaged_server
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        rows = page.locator(".xw-row")
        expect(rows.first).to_be_visible(timeout=120_000)
        page.locator('[data-testid="stSidebar"]').get_by_text("Your text", exact=True).click()
        box = page.get_by_label("Text", exact=True)
        expect(box).to_be_visible(timeout=30_000)
        box.fill(TEXT)
        box.press("Control+Enter")
        for index in range(len(files)):  # every default method's row shows the whole input, the last word too
            expect(rows.nth(index)).to_contain_text("ending", timeout=120_000)
            expect(rows.nth(index)).to_contain_text("gripping")
        expect(page.get_by_text("Prediction:").first).to_be_visible()
        page.wait_for_timeout(1500)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        assert page.get_by_text("Traceback").count() == 0
        assert page.get_by_text("served from the disk cache").count() == 0
        page.screenshot(path=str(ARTIFACTS / "e2e-corrupt-cache.png"))
        browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"
    encoding = quick_classifier.encode(TEXT)
    for method, path in files.items():  # each damaged file was replaced by the recomputed explanation
        replaced = Explanation.from_dict(json.loads(path.read_text()))
        assert problem_with(replaced, Request.of(quick_classifier, encoding, create(method), None)) is None, method
