"""Method cards page: pick a method, a metric group or a check and read its card (assets/cards)."""
from __future__ import annotations

import streamlit as st

from evaluation.suite import cards
from ui.widgets.share_link import shown

QUERY_KEY = "card"  # ?card=<id> opens that card (a shared link)


def intro() -> None:
    st.caption("What each explanation method and metric computes, its formula, what it assumes, what it costs, how "
               "it fails (in the papers' own words) and the paper it follows. The same cards open beside the "
               "heatmaps and the metrics.")


def picker() -> str:
    """The chosen card id; a ``?card=`` query parameter (or a metric id in it) preselects the card."""
    catalogue = cards.catalogue()
    titles = {card_id: title for group in catalogue.values() for card_id, title in group}
    asked = cards.card_id_for(st.query_params.get(QUERY_KEY, "")) if st.query_params.get(QUERY_KEY) else None
    groups = list(catalogue)
    asked_group = next((g for g, members in catalogue.items() if asked in dict(members)), None)
    if st.query_params.get(QUERY_KEY) and asked_group is None:  # only the catalogue's cards: never a path
        st.warning(f"The link's card {shown(st.query_params[QUERY_KEY])} is not one of the method cards; showing "
                   f"the card picked below.")
    if asked_group is not None and st.session_state.get("cards-asked") != asked:
        st.session_state["cards-asked"] = asked  # apply the link once; the reader's own picks win afterwards
        st.session_state["cards-group"] = asked_group
        st.session_state[f"cards-pick-{asked_group}"] = asked
    group = st.radio("Show", groups, horizontal=True, key="cards-group")
    ids = [card_id for card_id, _ in catalogue[group]]
    chosen = st.selectbox("Card", ids, key=f"cards-pick-{group}", format_func=lambda i: titles[i])
    st.query_params[QUERY_KEY] = chosen
    st.session_state["cards-asked"] = cards.card_id_for(chosen)  # our own link: not a request to apply next run
    return chosen


def show(card_id: str) -> None:
    card = cards.load(card_id)
    if card is None:  # the picker offers the catalogue's cards only; a file removed since reads as missing
        st.warning(f"The method card '{card_id}' is missing from assets/cards.")
        return
    st.header(card.title)
    st.markdown(card.body())
    st.caption(f"Source: assets/cards/{card_id}.md")
