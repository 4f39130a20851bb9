"""A shared server's quota in a real browser on the real server: with one running and no waiting job
allowed per session, a student's second report card is refused with the quota's message (never a traceback), and
the first one's Stop still works."""
from __future__ import annotations

import pytest
from conftest import ROOT
from e2e_support import ARTIFACTS, MARKS, browser_page, private_cache, streamlit_server

pytestmark = MARKS


@pytest.fixture(scope="module")
def server(quick_classifier, tmp_path_factory):
    cache = private_cache(tmp_path_factory.mktemp("e2e-quota-cache"))
    with streamlit_server("e2e-quota-server.log", EXWB_CACHE_DIR=str(cache), EXWB_RAISE_PAGE_ERRORS="0",
                          EXWB_SHARED="1", EXWB_JOB_SLOTS="1", EXWB_QUOTA_RUNNING="1",
                          EXWB_QUOTA_QUEUED="0") as url:
        yield url


def test_a_students_second_heavy_job_is_refused_with_the_quotas_message(server):
    from playwright.sync_api import expect

    with browser_page(server + "Report_card?model=default-quick") as page:
        build = page.get_by_role("button", name="Build (or resume) the report card")
        expect(build).to_be_visible(timeout=180_000)
        build.click()
        stop = page.get_by_role("button", name="Stop")
        expect(stop).to_be_visible(timeout=120_000)  # the first card runs
        page.get_by_text("Quick (a few examples and attack steps, to try it out)").click()  # another card
        page.wait_for_timeout(1000)
        build.click()
        refusal = page.get_by_text("the most this shared server allows per session")
        expect(refusal).to_be_visible(timeout=60_000)
        page.screenshot(path=str(ARTIFACTS / "e2e-quota.png"))
        body = page.locator("body").inner_text()
        assert "Traceback" not in body and str(ROOT) not in body
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        page.get_by_text("Quick (a few examples and attack steps, to try it out)").click()  # back to the first
        page.wait_for_timeout(1000)
        expect(stop).to_be_visible(timeout=60_000)
        stop.click()
        expect(page.get_by_text("Stopping after the current example")).to_be_visible(timeout=60_000)
