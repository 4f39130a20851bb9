"""Paper 000's single-word deletion grid (Figs. A17/A18) for the page's input. Layout only: the rows come from
``evaluation.faithfulness.deletion_grid``."""
from __future__ import annotations

import streamlit as st

from evaluation.faithfulness.deletion_grid import SOURCE, deletion_grid
from models import Encoding, Operator, TextClassifier, UserFacingError
from models.perturb import OPERATORS
from ui.widgets.tables import show_table

CHOICES = [o.value for o in Operator if o != Operator.MLM]


def section(classifier: TextClassifier, encoding: Encoding, key: str = "cf-grid") -> None:
    c1, c2 = st.columns(2)
    operator = c1.selectbox("Remove with", CHOICES, key=f"{key}-operator",
                            format_func=lambda o: OPERATORS[Operator(o)].label)
    width = int(c2.number_input("Words removed together (1: the paper's grid; more: phrases)", 1, 5, 1,
                                key=f"{key}-width"))
    try:
        grid, note = deletion_grid(classifier, encoding, operator, width)
    except UserFacingError as error:
        st.info(str(error))
        return
    if note:
        st.warning(note)
    flips = int(grid["flipped"].sum())
    st.markdown(f"**{flips} of {len(grid) - 1}** removal(s) change the prediction." if flips else
                f"No single removal of {width} word(s) changes the prediction ({len(grid) - 1} tried).")
    show_table(grid.drop(columns="position"), key=f"{key}-table",
               column_config={"confidence": st.column_config.ProgressColumn("confidence", format="%.3f",
                                                                           min_value=0.0, max_value=1.0)})
    st.download_button("Download the grid (CSV)", grid.to_csv(index=False), file_name="deletion_grid.csv",
                       mime="text/csv", key=f"{key}-csv")
    st.caption(f"{SOURCE}. One batch through the perturbation engine; the same grid: `cli.py deletion-grid`.")
