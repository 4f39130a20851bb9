"""The heatmap palette in the app: the sidebar's picker, and the session's choice registered with the figures.

The heatmap HTML itself lives in ``ui/figures/heatmap_html.py`` (no Streamlit, so the Python library can draw it,
the library draws without Streamlit); its names are re-exported here for the pages.
"""
from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ui.figures.heatmap_html import (  # noqa: F401
    CSS,
    DEFAULT_PALETTE,
    NEGATIVE,
    PALETTE_KEY,
    PALETTES,
    POSITIVE,
    SEPARATOR,
    SIGNED_SCALE,
    UNSIGNED,
    UNSIGNED_SCALE,
    Palette,
    active_palette,
    badge_of,
    colour,
    explanation_row_html,
    export_html,
    heatmap_html,
    html_document,
    legend_html,
    provenance_line,
    set_palette_source,
    text_colour,
)
from ui.widgets.state import kept


def palette_picker() -> Palette:
    """The colour palette control (sidebar); the choice is kept in the session for every page and heatmap."""
    name = kept(st.selectbox, "Heatmap colours", PALETTE_KEY, DEFAULT_PALETTE, list(PALETTES),
                format_func=lambda n: PALETTES[n].label,
                help="blue-orange reads the same for the common colour-vision deficiencies (Okabe-Ito colours).")
    return PALETTES[name]


def session_palette() -> str | None:
    """The palette picked in this session, or None outside a page run (exports from the command line, tests)."""
    if get_script_run_ctx(suppress_warning=True) is None:
        return None
    return st.session_state.get(f"keep:{PALETTE_KEY}")


set_palette_source(session_palette)
