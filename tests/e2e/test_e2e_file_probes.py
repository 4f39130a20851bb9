"""File-read probes in a real browser: on a shared server (EXWB_SHARED=1) the pages offer no field where
a server path can be typed, only built-in datasets, uploads and the admin's folders; on a single user's server a
typed path is checked, and a secret file's content, a missing file and a directory each give one plain message,
never the file's content and never a traceback. The real Streamlit server and headless Debian Chromium
(e2e_support.py), each server on a cache folder of its own."""
from __future__ import annotations

from e2e_support import ARTIFACTS, MARKS, browser_page, private_cache, streamlit_server
from report_card_fixtures import write_rationale_csv

pytestmark = MARKS
SECRET = "aws_key=AKIAEXAMPLE123, password=hunter2"


def _over_a_dataset(page, choice: str) -> None:
    from playwright.sync_api import expect

    tab = page.get_by_role("tab", name="Over a dataset")
    expect(tab).to_be_visible(timeout=240_000)  # cold start
    tab.click()
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Dataset with human rationales").first
    expect(box).to_be_visible(timeout=60_000)
    box.click()
    page.get_by_role("option", name=choice).click()


def test_a_shared_server_offers_no_path_field(quick_classifier, tmp_path):
    from playwright.sync_api import expect

    shared = tmp_path / "class"
    shared.mkdir()
    write_rationale_csv(shared / "week1.csv", 4, seed=3)
    cache = private_cache(tmp_path / "cache")
    with streamlit_server("e2e-shared-server.log", EXWB_CACHE_DIR=str(cache), EXWB_SHARED="1",
                          EXWB_DATA_FOLDERS=str(shared)) as url:
        with browser_page(url + "Plausibility") as page:
            _over_a_dataset(page, "your file: an upload or a shared file")
            files = page.locator('[data-testid="stSelectbox"]').filter(has_text="File").last
            expect(files).to_be_visible(timeout=60_000)
            expect(page.locator('input[type="file"]')).to_have_count(1, timeout=60_000)
            expect(page.get_by_label("Path", exact=True)).to_have_count(0)
            files.click()
            expect(page.get_by_role("option", name="shared file: class/week1.csv")).to_be_visible()
            page.screenshot(path=str(ARTIFACTS / "e2e-shared-plausibility.png"))
        with browser_page(url + "Report_card") as page:
            expect(page.get_by_text("Which method should I trust")).to_be_visible(timeout=240_000)
            # every dataset field is a choice: no text field takes a dataset id or a path
            expect(page.locator('[data-testid="stTextInput"]')).to_have_count(0)
            expect(page.locator('[data-testid="stException"]')).to_have_count(0)


def test_a_typed_path_never_shows_a_files_content(quick_classifier, tmp_path):
    from playwright.sync_api import expect

    secret = tmp_path / "secret.csv"
    secret.write_text(SECRET + "\n1,2\n")
    (tmp_path / "folder.csv").mkdir()
    cache = private_cache(tmp_path / "cache")
    with streamlit_server("e2e-paths-server.log", EXWB_CACHE_DIR=str(cache)) as url:
        with browser_page(url + "Plausibility") as page:
            _over_a_dataset(page, "file: a CSV/JSONL path")
            path = page.get_by_label("Path", exact=True)
            start = page.get_by_role("button", name="Start (or resume) the dataset run")
            alerts = page.locator('[data-testid="stAlert"]')
            shapes = []
            for probe, expected in ((secret, "column is required"), (tmp_path / "missing.csv", "No file at"),
                                    (tmp_path / "folder.csv", "is not a file")):
                path.fill(str(probe))
                path.press("Enter")
                expect(start).to_be_disabled(timeout=60_000)  # refused before any job (the secret: at its header)
                message = alerts.filter(has_text=expected)
                expect(message).to_have_count(1, timeout=120_000)
                shapes.append(message.inner_text().count("\n"))
                body = page.locator("body").inner_text()
                assert not any(token in body for token in ("AKIAEXAMPLE123", "hunter2", "aws_key")), probe
                expect(page.locator('[data-testid="stException"]')).to_have_count(0)
            assert shapes == [0, 0, 0]  # each a one-line message, no traceback
            page.screenshot(path=str(ARTIFACTS / "e2e-typed-path.png"))
