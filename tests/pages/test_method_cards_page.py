"""The Method cards page and the card widget with AppTest: every card opens, a ?card= link opens that card, the
widget shows a card (or a note for a name without one) in one call."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from evaluation.suite import cards

PAGE = "app_pages/8_Method_cards.py"


def open_cards(**query) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page(PAGE)
    at.query_params.update(query)
    at.run()
    assert not at.exception, at.exception
    return at


def shown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_the_page_shows_the_first_method_card_and_every_section(isolated_cache):
    at = open_cards()
    first_id, first_title = cards.catalogue()["Methods"][0]
    assert [h.value for h in at.header] == [first_title]
    text = shown_text(at)
    for section in cards.SECTIONS:
        assert f"## {section}" in text
    assert at.query_params["card"] == first_id  # the card in view is in the link


def test_a_link_opens_the_card_it_names(isolated_cache):
    at = open_cards(card="attention_rollout")
    assert [h.value for h in at.header] == [cards.load("attention_rollout").title]
    assert "fixed point" in shown_text(at)


def test_a_link_to_a_metric_opens_its_group_card(isolated_cache):
    at = open_cards(card="sufficiency-eraser")
    assert at.radio(key="cards-group").value == "Metrics"
    assert [h.value for h in at.header] == [cards.load("eraser").title]


def test_every_card_opens_from_the_picker(isolated_cache):
    at = open_cards()
    for group, members in cards.catalogue().items():
        at.radio(key="cards-group").set_value(group).run()
        for card_id, title in members:
            at.selectbox(key=f"cards-pick-{group}").set_value(card_id).run()
            assert not at.exception, (card_id, at.exception)
            assert [h.value for h in at.header] == [title]


def _widget_script(name: str) -> None:
    from ui.widgets.method_card import method_card

    method_card(name)


@pytest.mark.parametrize("name, expected", [("lime:paper-000", "About LIME"),
                                            ("deletion-auc", "About Deletion AUC (paper 000)")])
def test_the_widget_shows_the_card_in_an_expander(name, expected):
    at = AppTest.from_function(_widget_script, args=(name,)).run()
    assert not at.exception, at.exception
    assert [e.label for e in at.expander] == [expected]
    assert "## How it fails" in shown_text(at)


def test_the_widget_notes_a_name_without_a_card():
    at = AppTest.from_function(_widget_script, args=("not-a-method",)).run()
    assert not at.exception
    assert not at.expander
    assert "No method card for 'not-a-method'" in at.caption[0].value
