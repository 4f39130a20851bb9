"""Heatmaps page: method agreement (rank correlation matrix) and the top-3-words grid."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from evaluation.agreement import CAVEAT, MEASURES, agreement_matrix, top_k_table
from explainers import Explanation

from ui.figures.agreement import agreement_figure
from ui.widgets.tables import show_table


def finished(results: dict) -> list[Explanation]:
    """The explanations among a page's results (pending methods and errors left out)."""
    return [r for r in results.values() if isinstance(r, Explanation)]


def agreement_panel(explanations: list[Explanation], key: str = "agreement") -> None:
    st.markdown("#### Method agreement")
    if len(explanations) < 2:
        st.info("Agreement needs at least two computed methods.")
        return
    left, right = st.columns(2)
    measure = left.radio("Rank correlation", tuple(MEASURES), horizontal=True, key=f"{key}-measure",
                         format_func=lambda m: MEASURES[m][0])
    magnitude = right.toggle("Compare magnitudes |score|", value=True, key=f"{key}-abs",
                             help="On: rank words by |score| (methods with and without a sign become comparable). "
                                  "Off: rank by signed score.")
    agreement = agreement_matrix(explanations, measure, absolute=magnitude)
    st.plotly_chart(agreement_figure(agreement), key=f"{key}-chart", width="stretch")
    st.caption(f"{CAVEAT} n/a: a method gave every word the same score. {len(explanations[0].words)} words.")
    with st.expander("Agreement values"):
        show_table(pd.DataFrame(agreement.to_rows()), f"{key}-table",
                   why_missing="a method gave every word the same score (no ranking to correlate)")


def top_words_panel(explanations: list[Explanation], absolute: bool, k: int = 3, key: str = "top-words") -> None:
    st.markdown(f"#### Top-{k} words per method")
    if not explanations:
        return
    st.caption("Ranked by " + ("|score|" if absolute else "signed score (for unsigned methods: importance)") +
               "; raw scores in brackets.")
    st.dataframe(top_k_table(explanations, k=k, absolute=absolute), hide_index=True, key=f"{key}-table",
                 width="stretch")
