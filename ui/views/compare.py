"""Heatmaps page: method agreement (rank correlations, Krishna et al.'s disagreement measures), the shape of each
explanation (complexity, sparseness) and the top-3-words grid."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from evaluation.agreement.measures import (
    CAVEAT,
    DEFAULT_K,
    MEASURES,
    SHAPES,
    TOP_K,
    Agreement,
    agreement_matrix,
    shape_table,
    top_k_table,
)
from explainers import Explanation
from ui.figures.agreement import agreement_figure
from ui.widgets.tables import show_table


def finished(results: dict) -> list[Explanation]:
    """The explanations among a page's results (pending methods and errors left out)."""
    return [r for r in results.values() if isinstance(r, Explanation)]


@st.fragment  # a change of measure, k or magnitude (or a panel opened) reruns this panel alone, not the page
def agreement_panel(explanations: list[Explanation], key: str = "agreement") -> None:
    st.markdown("#### Method agreement")
    if len(explanations) < 2:
        st.info("Agreement needs at least two computed methods.")
        return
    measure = st.radio("Measure", tuple(MEASURES), horizontal=True, key=f"{key}-measure",
                       format_func=lambda m: MEASURES[m][0],
                       help="Correlations (-1..1) and the disagreement measures of Krishna et al. (shares, 0..1): "
                            + "; ".join(f"{label}: {meaning}" for label, meaning in MEASURES.values()))
    left, right = st.columns(2)
    n_words = len(explanations[0].words)
    k = int(left.number_input("k (top-k measures and top-k share)", 1, max(1, n_words), min(DEFAULT_K, n_words),
                              key=f"{key}-k"))
    magnitude = right.toggle("Compare magnitudes |score|", value=True, key=f"{key}-abs",
                             help="On: rank words by |score| (methods with and without a sign become comparable). "
                                  "Off: rank by signed score. Sign agreement always reads the raw scores' signs.")
    agreement = agreement_matrix(explanations, measure, absolute=magnitude, k=k)
    shown_k = k if measure in TOP_K else None
    content = (agreement.labels, measure, magnitude, agreement.matrix.tobytes(), shown_k)
    st.plotly_chart(agreement_chart(content, agreement, shown_k), key=f"{key}-chart", width="stretch")
    st.caption(f"{CAVEAT} n/a: a method gave every word the same score. {n_words} words.")
    # the tables are built only while their panel is open (a table costs a page rerun a few milliseconds)
    values = st.expander("Agreement values", key=f"{key}-values-open", on_change="rerun")
    if values.open:
        with values:
            show_table(pd.DataFrame(agreement.to_rows()), f"{key}-table",
                       why_missing="a method gave every word the same score (no ranking to correlate)")
    shapes = st.expander("Shape of each explanation: complexity and sparseness", key=f"{key}-shape-open",
                         on_change="rerun")
    if not shapes.open:
        return
    with shapes:
        shape = pd.DataFrame(shape_table(explanations, k)).drop(columns="k")
        show_table(shape.rename(columns={m: f"{label} {'↓' if m == 'complexity' else '↑'}"
                                         for m, (label, _) in SHAPES.items()}), f"{key}-shape",
                   why_missing="every score of the method is 0")
        st.caption(" · ".join(f"**{label}**: {meaning}" for label, meaning in SHAPES.values()) + f" (k = {k}). On "
                   "|score|; concentration is not faithfulness either.")


@st.cache_resource(max_entries=64, show_spinner=False)
def agreement_chart(content: tuple, _agreement: Agreement, k: int | None) -> go.Figure:
    """The agreement figure, built once per ``content`` (method labels, measure, magnitude, the matrix's bytes, k):
    a page rerun reuses it (plotly figures are slow to build; st.plotly_chart does not change them)."""
    return agreement_figure(_agreement, k)


def top_words_panel(explanations: list[Explanation], absolute: bool, k: int = 3, key: str = "top-words") -> None:
    st.markdown(f"#### Top-{k} words per method")
    if not explanations:
        return
    st.caption("Ranked by " + ("|score|" if absolute else "signed score (for unsigned methods: importance)") +
               "; raw scores in brackets.")
    st.dataframe(top_k_table(explanations, k=k, absolute=absolute), hide_index=True, key=f"{key}-table",
                 width="stretch")
