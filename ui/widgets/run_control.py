"""The "start (or resume) / stop a dataset run" block of the pages that run studies over a dataset."""
from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from corpora import DataError
from evaluation.runs.jobs import JOBS
from evaluation.suite.runner import evaluate_example
from explainers import ParamError
from models import UserFacingError

# what a bad choice on the page raises while a run is set up: shown as a message, never a traceback
SETUP_ERRORS = (DataError, UserFacingError, ParamError, KeyError, ValueError)


def start_stop(key: str, run_key: str, start: Callable[[], tuple], disabled: bool = False,
               work: Callable[[dict], dict] = evaluate_example,
               label: str = "Start (or resume) the dataset run") -> str | None:
    """A Start button that calls ``start() -> (store, run_id, cells)`` and runs the cells (``work`` per cell, the
    metric runner's by default) as a background job
    (the run id goes to ``st.session_state[run_key]``), and a Stop button while that run is running. Returns
    the session's run id (None before the first start)."""
    left, right = st.columns(2)
    if left.button(label, key=f"{key}-start", type="primary", disabled=disabled):
        try:
            store, run_id, cells = start()
            JOBS.start(store, run_id, cells, work)  # a quota refusal (shared mode) is a UserFacingError
        except SETUP_ERRORS as error:
            st.error(str(error).strip("'\""))  # a KeyError's message comes quoted
        else:
            st.session_state[run_key] = run_id
    run_id = st.session_state.get(run_key)
    if run_id and JOBS.is_running(run_id) and right.button("Stop", key=f"{key}-stop"):
        JOBS.stop(run_id)
        st.toast("Stopping after the current example; start again to resume.")
    return run_id


def chosen_dataset(dataset: str | None) -> str:
    """``dataset`` once a usable one is chosen; a Start reached without one (its button is disabled) gets a message."""
    if dataset is None:
        raise UserFacingError("Choose a usable dataset first.")
    return dataset
