"""A method's or metric's card (``assets/cards``) in an expander or a popover: one call beside a heatmap row or a
metric, ``method_card("saliency")`` or ``method_card("comprehensiveness-eraser")``."""
from __future__ import annotations

import streamlit as st

from evaluation.suite import cards


def method_card(name: str, popover: bool = False, label: str | None = None) -> None:
    """The card explaining ``name`` (a method id or "method:preset" spec, a metric group or a metric id).

    A name without a card gets a one-line note instead, so a page never breaks on a method added without one."""
    card = cards.card_for(name)
    if card is None:
        st.caption(f"No method card for '{name}' yet (assets/cards/).")
        return
    shown = label or f"About {card.title}"
    container = st.popover(shown, icon=":material/school:") if popover else st.expander(shown,
                                                                                        icon=":material/school:")
    with container:
        st.markdown(card.body())
