"""What the user picked in the sidebar, shared by every page through the session state."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import streamlit as st

import settings
from corpora import Example

KEY = "selection"


@dataclass(frozen=True)
class Selection:
    model: str
    text: str
    pair: str | None
    target: int | None  # None = the predicted class
    level: str  # "word" or "token"
    source: str
    example: Example | None = None  # a dataset example (gold label, human rationale)
    contrast: int | None = None  # "why the target rather than this class?"; None = no contrast


def kept(widget, label: str, key: str, default, options=None, **kwargs):
    """A widget whose value survives switching pages.

    Streamlit forgets the state of widgets on a page the user leaves; every page draws the same sidebar,
    so each widget starts from the value stored under ``keep:<key>`` and writes its value back.
    """
    store = f"keep:{key}"
    value = st.session_state.get(store, default)
    if options is not None:
        options = list(options)
        if value not in options:
            value = default if default in options else options[0]
        result = widget(label, options, index=options.index(value), key=key, **kwargs)
    else:
        result = widget(label, value=value, key=key, **kwargs)
    st.session_state[store] = result
    return result


def set_kept(key: str, value) -> None:
    """Give the kept widget ``key`` a new value from code (call it in a button's ``on_click``, before the widget is
    drawn): its stored value changes and its own state is dropped, so it is drawn afresh from the new value."""
    st.session_state[f"keep:{key}"] = value
    if key in st.session_state:
        del st.session_state[key]


def current() -> Selection | None:
    return st.session_state.get(KEY)


def store(selection: Selection | None) -> None:
    st.session_state[KEY] = selection


@lru_cache(maxsize=1)
def examples() -> dict:
    return json.loads((settings.ROOT / "assets" / "examples.json").read_text())
