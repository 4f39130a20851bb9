"""The "Show run" box of the dataset tabs: stored runs to reopen, where a run just started is the one shown.

The result store is shared by every user of the app, so the box lists the runs of the model in use (not other
users' runs of other models, failed ones included), with a switch to show every model's runs.
"""
from __future__ import annotations

import streamlit as st

from evaluation.runs.jobs import JOBS
from ui.widgets.run_progress import run_progress


def of_model(runs: list[dict], model: str | None, key: str) -> list[dict]:
    """The runs of ``model`` (all when it is None or the user switches to all); says how many are hidden."""
    if model is None:
        return runs
    if st.toggle("Show every model's runs", key=f"{key}-all",
                 help="The store keeps the runs of every model and every user of this app."):
        return runs
    mine = [r for r in runs if r.get("config", {}).get("model") == model]
    if len(mine) < len(runs):
        st.caption(f"{len(runs) - len(mine)} run(s) of other models hidden; the switch above shows them.")
    return mine


def mixed(runs: list[dict]) -> bool:
    """Whether the runs belong to more than one model (then each names its model)."""
    return len({r.get("config", {}).get("model") for r in runs}) > 1


def describe(run: dict, with_model: bool = False) -> str:
    model = f" · model {run.get('config', {}).get('model')}" if with_model else ""
    return f"{run['title']} · {JOBS.status_label(run)} · {run['done']}/{run['total']}{model}"


def run_picker(runs: list[dict], started: str | None, key: str, model: str | None = None) -> str | None:
    """A select box over ``runs`` (store records) of ``model``; returns the chosen run id, None when none is left.

    ``started`` is the run this session started last. A keyed box keeps its value across reruns, so without
    help it would go on showing the previously selected run after a Start; when ``started`` changes the box
    moves to it once, and afterwards the user's own pick stands.
    """
    runs = of_model(runs, model, key)
    if not runs:
        return None
    ids = [r["id"] for r in runs]
    followed = f"{key}:followed"
    if started in ids and st.session_state.get(followed) != started:
        st.session_state[key] = started
        st.session_state[followed] = started
    elif st.session_state.get(key) not in ids:
        st.session_state[key] = started if started in ids else ids[0]
    titles = {r["id"]: describe(r, mixed(runs)) for r in runs}
    return st.selectbox("Show run", ids, key=key, format_func=titles.__getitem__)


def pick_run(store, runs: list[dict], started: str | None, key: str, model: str | None, noun: str,
             unit: str = "examples") -> str | None:
    """``run_picker`` with what every run section shows around it: a caption when there is no run of ``model``
    (``noun``: "sanity runs", "report cards", ...), else the chosen run's progress. Returns the chosen run id."""
    chosen = run_picker(runs, started, key=key, model=model)
    if chosen is None:
        st.caption(f"No {noun} of this model yet." if runs else f"No {noun} yet.")
        return None
    run_progress(store, chosen, unit=unit)
    return chosen
