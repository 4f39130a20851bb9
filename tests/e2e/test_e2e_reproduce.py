"""The Reproduce page in a real browser on the real server: choose a paper and the tiny budget, start its
reproduce run, watch the progress move, Stop it, see the partial table, start again to resume (no finished cell
recomputed, read from the server's own store), and see the finished table, whose downloaded page holds every
finding with a verdict. The real Streamlit server and headless Debian Chromium (e2e_support.py); the tiny budget
trains its one-block models from the bundled weights in the test's own cache folder."""
from __future__ import annotations

import re

from e2e_support import MARKS, browser_page, private_cache, streamlit_server

from evaluation.reproduce import BUDGETS, KIND, findings_for
from evaluation.runs.store import ResultStore

pytestmark = MARKS
PAPER = "004"  # the tiny run with the fewest cells that still trains models per seed (about a minute per seed)
TOTAL = len(findings_for(PAPER, "tiny")) * len(BUDGETS["tiny"].seeds)


def _done(page) -> int:
    """Cells done, from the progress bar's text ("N of TOTAL cells ...")."""
    text = page.get_by_text(re.compile(rf"\d+ of {TOTAL} cells")).first.inner_text()
    return int(re.search(rf"(\d+) of {TOTAL} cells", text).group(1))


def test_start_stop_resume_and_read_the_findings(quick_classifier, tmp_path):
    from playwright.sync_api import expect

    cache = private_cache(tmp_path / "cache")
    with streamlit_server("e2e-reproduce-server.log", EXWB_CACHE_DIR=str(cache)) as url:
        with browser_page(url + "Reproduce") as page:
            expect(page.get_by_role("heading", name="Reproduce the papers")).to_be_visible(timeout=240_000)
            page.get_by_role("combobox", name="Paper").click()
            page.get_by_role("option", name=re.compile(rf"^{PAPER}: ")).click()
            expect(page.get_by_text(re.compile(r"Estimate: about \d+ min")).first).to_be_visible(timeout=60_000)

            start = page.get_by_role("button", name="Start (or resume) the reproduction")
            start.click()
            progress = page.get_by_text(re.compile(rf"[1-9]\d* of {TOTAL} cells"))  # the bar moved
            expect(progress.first).to_be_visible(timeout=300_000)
            page.get_by_role("button", name="Stop").click()
            expect(page.get_by_text("Stopping after the current example").first).to_be_visible(timeout=30_000)
            expect(page.get_by_role("button", name="Stop")).to_have_count(0, timeout=300_000)
            expect(page.get_by_text(re.compile(rf"of {TOTAL} cells \(cancelled\)")).first).to_be_visible(timeout=60_000)
            stopped_at = _done(page)
            assert 0 < stopped_at < TOTAL
            expect(page.locator('[data-testid="stDataFrame"]')).to_have_count(1)  # the partial table

            store = ResultStore(cache / "results.sqlite")
            (run,) = store.list_runs(KIND)
            before = {cell["key"]: cell["finished"] for cell in store.export_run(run["id"])["cells"]}
            assert len(before) == stopped_at

            start.click()  # resume
            expect(page.get_by_text(re.compile(rf"{TOTAL} of {TOTAL} cells \(finished\)")).first).to_be_visible(
                timeout=600_000)
            after = {cell["key"]: cell["finished"] for cell in store.export_run(run["id"])["cells"]}
            assert len(after) == TOTAL and all(after[key] == when for key, when in before.items())
            assert store.list_runs(KIND)[0]["id"] == run["id"]  # the same run, resumed

            with page.expect_download(timeout=60_000) as download:
                page.get_by_role("button", name="Download the page (markdown)").click()
            text = open(download.value.path()).read()
            assert text.startswith("<!-- generated") and f"{TOTAL} of {TOTAL} cells (finished)" in text
            rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line][1:]
            assert len(rows) == len(findings_for(PAPER, "tiny"))
            assert all(re.search(r"\| (reproduced|partly|not reproduced) \|", row) for row in rows), rows
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)
