"""Uploads on a shared server, in a real browser on the real server: the Faithfulness dataset picker
offers the admin's shared file beside the built-ins and an upload; a 100k-row upload is parsed in a worker process
whose memory limit refuses it with a message naming EXWB_PARSE_MB, while ``/_stcore/health`` answers within 2 s all
along; a small upload is read and the run can start. The real Streamlit server and headless Debian Chromium
(e2e_support.py)."""
from __future__ import annotations

import threading
import time
import urllib.request

from e2e_support import ARTIFACTS, MARKS, browser_page, private_cache, streamlit_server
from report_card_fixtures import write_rationale_csv

pytestmark = MARKS


def _health_seconds(url: str) -> float:
    started = time.monotonic()
    try:
        assert urllib.request.urlopen(url + "_stcore/health", timeout=2).read() == b"ok"
    except OSError:
        return float("inf")
    return time.monotonic() - started


def _write_rows(path, rows: int):
    with open(path, "w") as handle:
        handle.write("text,label\n")
        for i in range(rows):
            handle.write(f"a fine film number {i} with warm scenes and a dull plot,{i % 2}\n")
    return path


def test_a_big_upload_is_parsed_off_the_server_and_refused_by_its_memory_limit(quick_classifier, tmp_path):
    from playwright.sync_api import expect

    shared = tmp_path / "class"
    shared.mkdir()
    write_rationale_csv(shared / "week3.csv", 4, seed=3)
    big = _write_rows(tmp_path / "big.csv", 100_000)  # ~6 MB of text, far more once parsed
    small = _write_rows(tmp_path / "small.csv", 4)
    cache = private_cache(tmp_path / "cache")
    with streamlit_server("e2e-upload-server.log", EXWB_CACHE_DIR=str(cache), EXWB_SHARED="1",
                          EXWB_DATA_FOLDERS=str(shared), EXWB_UPLOAD_ROWS="200000", EXWB_PARSE_MB="30") as url:
        with browser_page(url + "Faithfulness") as page:
            tab = page.get_by_role("tab", name="Over a dataset")
            expect(tab).to_be_visible(timeout=240_000)  # cold start
            tab.click()
            picker = page.get_by_role("combobox", name="Dataset", exact=True).first  # the visible tab's
            expect(picker).to_be_visible(timeout=60_000)
            picker.click()
            expect(page.get_by_role("option", name="shared file: class/week3.csv")).to_be_visible()
            page.get_by_role("option", name="upload a CSV / TSV / JSONL / Parquet file").click()
            uploader = page.locator('input[type="file"]')
            expect(uploader).to_have_count(1, timeout=60_000)

            answers: list[float] = []
            done = threading.Event()

            def poll() -> None:
                while not done.is_set():
                    answers.append(_health_seconds(url))
                    time.sleep(0.1)

            poller = threading.Thread(target=poll, daemon=True)
            poller.start()
            uploader.set_input_files(str(big))
            refusal = page.locator('[data-testid="stAlert"]').filter(has_text="EXWB_PARSE_MB")
            expect(refusal).to_have_count(1, timeout=180_000)
            selected = tab.get_attribute("aria-selected")
            tab.click()  # Streamlit may show the first tab again after the rerun an upload starts
            expect(refusal).to_be_visible(timeout=60_000)
            done.set()
            poller.join()
            assert "big.csv" in refusal.inner_text() and "fine film" not in refusal.inner_text()
            page.screenshot(path=str(ARTIFACTS / "e2e-upload-refused.png"))
            assert answers and max(answers) < 2.0, answers  # the server answered all through the parse
            print(f"tab still selected after the upload: {selected}; health answers: {len(answers)}, "
                  f"slowest {max(answers):.2f} s")

            uploader.set_input_files(str(small))
            tab.click()
            start = page.get_by_role("button", name="Start (or resume) the dataset run")
            expect(start).to_be_enabled(timeout=120_000)
            expect(refusal).to_have_count(0)
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)
