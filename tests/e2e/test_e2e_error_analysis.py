"""Error analysis in a real browser: open the page, keep the misclassified SST-2 dev examples, open the
most confident error and read its heatmaps on the Heatmaps page. The example expected is computed here, apart from
the page, from the same predictions."""
from __future__ import annotations

import re

import pytest
from e2e_support import ARTIFACTS, MARKS, browser_page, streamlit_server

from corpora import load_dataset
from evaluation.errors.filters import Filters, apply_filters, confident_errors_first
from evaluation.errors.predictions import predict_dataset
from evaluation.runs.store import ResultStore

pytestmark = MARKS


@pytest.fixture(scope="module")
def server(quick_classifier):
    with streamlit_server("e2e-errors-server.log") as url:
        yield url


@pytest.fixture(scope="module")
def most_confident_error(quick_classifier, tmp_path_factory):
    examples = load_dataset("sst2:dev", label_names=quick_classifier.labels)
    table = predict_dataset(quick_classifier, examples, "sst2:dev",
                            store=ResultStore(tmp_path_factory.mktemp("errors") / "store.sqlite"))
    errors = confident_errors_first(apply_filters(table.frame, Filters(misclassified=True)))
    return len(errors), errors.iloc[0]["text"]


def test_filter_the_errors_open_one_and_read_its_heatmaps(server, most_confident_error):
    from playwright.sync_api import expect

    count, text = most_confident_error
    with browser_page(server + "Error_analysis") as page:
        ready = page.get_by_text("Misclassified only")
        predict = page.get_by_role("button", name=re.compile("Predict all"))
        expect(ready.or_(predict).first).to_be_visible(timeout=240_000)
        if predict.count():  # the estimate was over the auto-run budget on this machine: one click
            predict.click()
        expect(ready).to_be_visible(timeout=300_000)
        ready.click()
        expect(page.get_by_text(f"{count:,} of 872 examples, confident errors first.")).to_be_visible(timeout=120_000)
        page.get_by_role("button", name="Open this example").click()
        page.wait_for_timeout(1000)
        page.locator('[data-testid="stSidebarNav"] a').filter(has_text="Heatmaps").first.click()
        rows = page.locator(".xw-row")
        expect(rows.first).to_be_visible(timeout=240_000)
        longest = max(text.split(), key=len)
        expect(rows.first).to_contain_text(longest, timeout=120_000)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        page.screenshot(path=str(ARTIFACTS / "e2e-error-analysis.png"))
