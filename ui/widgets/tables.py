"""Tables as readers see them: methods by their labels (never ids), missing values as "n/a" with the reason
underneath (never a raw None), and long text in wide columns the table scrolls to instead of cutting off."""
from __future__ import annotations

import re

import pandas as pd
import streamlit as st

from explainers import label_for

MISSING = "n/a"
LONG_TEXT = 28  # characters: a text column with longer values gets a wide column
_NAN_TEXT = re.compile(r"^nan\b")  # a number formatted before it was known to be missing ("nan [nan, nan]")


def labelled(frame: pd.DataFrame, columns: tuple[str, ...] = ("method",), index: bool = False,
             header: bool = False) -> pd.DataFrame:
    """A copy with method ids / specs shown as their labels in ``columns``, the index and / or the header."""
    def name(value):
        return label_for(value) if isinstance(value, str) else value

    out = frame.copy()
    for column in columns:
        if column in out.columns:
            out[column] = out[column].map(name)
    if index:
        out.index = pd.Index([name(i) for i in out.index], name=out.index.name)
    if header:
        out.columns = pd.Index([name(c) for c in out.columns], name=out.columns.name)
    return out


def missing_as_none(frame: pd.DataFrame) -> pd.DataFrame:
    """Text cells that spell a missing number ("nan", "nan [nan, nan]") become missing values."""
    return frame.map(lambda v: None if isinstance(v, str) and _NAN_TEXT.match(v) else v)


def column_widths(frame: pd.DataFrame) -> dict:
    """Wide columns for long text (explanations, presets, confidence intervals), so nothing is cut off."""
    config = {}
    for column in frame.columns:
        values = frame[column]
        if not pd.api.types.is_numeric_dtype(values) and \
                values.map(lambda v: len(v) if isinstance(v, str) else 0).max() > LONG_TEXT:
            config[str(column)] = st.column_config.TextColumn(width="large")
    return config


def show_table(frame: pd.DataFrame, key: str, why_missing: str | None = None, hide_index: bool = True,
               column_config: dict | None = None) -> None:
    """st.dataframe with "n/a" for missing values (and why, in a caption), wide text columns, full width."""
    frame = missing_as_none(frame)
    st.dataframe(frame, key=key, hide_index=hide_index, width="stretch", placeholder=MISSING,
                 column_config={**column_widths(frame), **(column_config or {})})
    if why_missing and frame.isna().to_numpy().any():
        st.caption(f"{MISSING}: {why_missing}")
