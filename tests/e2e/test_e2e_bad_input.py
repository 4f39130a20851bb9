"""End to end: a user file whose label matches no label of the model, opened from the sidebar in a real
browser, gets a one-line message naming the user's file, the row and the labels to use; a correct file with
differently capitalised names then opens with the model's labels. The real Streamlit server and headless Debian
Chromium, started by e2e_support.py, on a cache folder of its own (uploads are written there; the
prepared models are linked in)."""
from __future__ import annotations

import pytest
from e2e_support import ARTIFACTS, MARKS, browser_page, private_cache, streamlit_server

pytestmark = MARKS


@pytest.fixture(scope="module")
def server(quick_classifier, tmp_path_factory):
    cache = private_cache(tmp_path_factory.mktemp("e2e-bad-input-cache"))
    with streamlit_server("e2e-bad-input-server.log", EXWB_CACHE_DIR=str(cache)) as url:
        yield url


@pytest.fixture()
def page(server):
    with browser_page(server) as page:
        yield page


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
    assert "negatve" not in text  # the file's content is never quoted
    assert text.startswith("my reviews.csv: 1 malformed row(s): row 2: the label matches none of the model's "
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
