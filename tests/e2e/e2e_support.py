"""What every browser test needs: the real Streamlit server on a free port (optionally on a cache folder of its
own with the prepared models linked in) and a headless Debian Chromium page that fails the test on a JavaScript
error. Chromium comes from Debian (`make test` installs it); Playwright never downloads a browser."""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
ARTIFACTS = ROOT / "artifacts"
MARKS = [pytest.mark.e2e, pytest.mark.integration]
if CHROMIUM is None:
    MARKS.append(pytest.mark.skip(reason="Debian chromium is not installed (make test installs it)"))


def private_cache(folder: Path) -> Path:
    """A cache folder of the test's own that still sees the prepared quick model (linked, not rebuilt)."""
    from models.prepare import find_prepared

    (folder / "models").mkdir(parents=True, exist_ok=True)
    real = find_prepared("default-quick")
    (folder / "models" / real.name).symlink_to(real, target_is_directory=True)
    return folder


@contextlib.contextmanager
def streamlit_server(log_name: str, **env_overrides: str):
    """The real app on 127.0.0.1 with the quick model; yields its URL once /_stcore/health answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "EXWB_MODEL": "default-quick", "EXWB_THREADS": "1", "HF_HUB_OFFLINE": "1",
           "OMP_WAIT_POLICY": "PASSIVE", **env_overrides}
    ARTIFACTS.mkdir(exist_ok=True)
    with open(ARTIFACTS / log_name, "w") as log:
        process = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
                                    "--server.fileWatcherType", "none",
                                    "--server.port", str(port), "--server.address", "127.0.0.1",
                                    "--browser.gatherUsageStats", "false"], cwd=ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}/"
            for _ in range(300):
                try:
                    if urllib.request.urlopen(url + "_stcore/health", timeout=1).read() == b"ok":
                        break
                except OSError:
                    time.sleep(0.2)
            else:
                pytest.fail(f"the Streamlit server did not become healthy; see artifacts/{log_name}")
            yield url
        finally:
            process.terminate()
            process.wait(20)


@contextlib.contextmanager
def browser_page(url: str):
    """A Chromium page opened at ``url``; JavaScript errors seen while the test ran fail it at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1600})
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(url)
        yield page
        browser.close()
    assert not errors, f"JavaScript errors in the page: {errors}"
