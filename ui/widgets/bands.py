"""Which methods' confidence bands a chart shades: six overlapping bands hide each other, so the reader picks."""
from __future__ import annotations

import streamlit as st

from explainers import label_for

DEFAULT_SHADED = 2


def band_picker(methods: list[str], key: str, labels: dict[str, str] | None = None,
                default: list[str] | None = None) -> list[str]:
    """A multiselect of the methods whose 95 % CI is shaded (by default the first two)."""
    labels = labels or {}
    chosen = [m for m in (default if default is not None else methods[:DEFAULT_SHADED]) if m in methods]
    return st.multiselect("Shade the 95 % CI of", methods, default=chosen, key=key,
                          format_func=lambda m: labels.get(m) or label_for(m),
                          help="Each shaded band is one method's confidence interval; overlapping bands hide "
                               "each other, so pick the ones to compare.")
