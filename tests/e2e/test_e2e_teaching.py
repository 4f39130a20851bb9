"""Teaching in a real browser: every method card's formulas render with KaTeX (no KaTeX error), and a shared link
opens the same view in a fresh browser page, with the link the page shows."""
from __future__ import annotations

from urllib.parse import quote, urlencode

import pytest
from e2e_support import ARTIFACTS, MARKS, browser_page, streamlit_server

from evaluation.suite import cards

pytestmark = MARKS

TEXT = "a warm and <i>funny</i> film"


@pytest.fixture(scope="module")
def server(quick_classifier):
    with streamlit_server("e2e-teaching-server.log") as url:
        yield url


@pytest.mark.slow  # a fresh page per card: about 5 minutes on a shared 2-core machine
def test_every_card_renders_its_formulas(server):
    from playwright.sync_api import expect

    ids = [card_id for group in cards.catalogue().values() for card_id, _ in group]
    problems = []
    with browser_page(server + "Method_cards") as page:
        for card_id in ids:
            page.goto(f"{server}Method_cards?card={card_id}")
            expect(page.get_by_role("heading", name=cards.load(card_id).title)).to_be_visible(timeout=120_000)
            expect(page.locator(".katex").first).to_be_visible(timeout=30_000)
            errors = page.locator(".katex-error")
            problems += [f"{card_id}: {errors.nth(i).get_attribute('title')} in {errors.nth(i).inner_text()[:80]!r}"
                         for i in range(errors.count())]
        page.screenshot(path=str(ARTIFACTS / "e2e-method-card.png"))
    assert not problems, "formulas KaTeX cannot read:\n" + "\n".join(problems)


def test_a_shared_link_reopens_the_same_view(server):
    from playwright.sync_api import expect

    link = server + "?" + urlencode({"page": "Heatmaps", "model": "default-quick", "text": TEXT,
                                     "methods": "attention,leave_one_out", "palette": "blue-orange"}, quote_via=quote)
    with browser_page(link) as page:
        rows = page.locator(".xw-row")
        expect(rows.first).to_contain_text("funny", timeout=240_000)  # cold start on a shared machine
        assert rows.count() == 2
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Share this view").click()
        shown = sidebar.locator('[data-testid="stCode"]').first
        expect(shown).to_be_visible(timeout=30_000)
        shared = shown.inner_text().strip()
    assert shared.startswith(server) and "methods=attention%2Cleave_one_out" in shared
    with browser_page(shared) as again:
        rows = again.locator(".xw-row")
        expect(rows.first).to_contain_text("funny", timeout=120_000)
        assert rows.count() == 2
        expect(again.get_by_text("<i>funny</i>").first).to_be_visible()  # the text is shown, not rendered
        html = again.content()
        assert "rgba(0,114,178,0.8)" in html and "rgba(33,102,172" not in html  # the link's palette, not the default
        again.screenshot(path=str(ARTIFACTS / "e2e-shared-link.png"))
