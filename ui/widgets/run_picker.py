"""The "Show run" box of the dataset tabs: stored runs to reopen, where a run just started is the one shown."""
from __future__ import annotations

import streamlit as st


def run_picker(runs: list[dict], started: str | None, key: str) -> str:
    """A select box over ``runs`` (store records); returns the chosen run id.

    ``started`` is the run this session started last. A keyed box keeps its value across reruns, so without
    help it would go on showing the previously selected run after a Start; when ``started`` changes the box
    moves to it once, and afterwards the user's own pick stands.
    """
    ids = [r["id"] for r in runs]
    followed = f"{key}:followed"
    if started in ids and st.session_state.get(followed) != started:
        st.session_state[key] = started
        st.session_state[followed] = started
    elif st.session_state.get(key) not in ids:
        st.session_state[key] = started if started in ids else ids[0]
    titles = {r["id"]: f"{r['title']} · {r['status']} · {r['done']}/{r['total']}" for r in runs}
    return st.selectbox("Show run", ids, key=key, format_func=titles.get)
