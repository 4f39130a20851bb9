"""The owner of the jobs a page starts: the browser session of the script run that calls ``JOBS.start``.

Registered with the job runner when ``ui`` is imported, so every page's Start button gives its job an owner (the
job queue's quotas and fair order are per owner, evaluation/runs/scheduler.py). A reload opens a new session,
hence a new owner: the quotas bound what one open page can start, not what one person can.
"""
from __future__ import annotations

import uuid

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from evaluation.runs.jobs import set_owner_source

OWNER_KEY = "_jobs_owner"  # a random id kept in the session state: one per browser session (and per AppTest)


def session_owner() -> str | None:
    if get_script_run_ctx(suppress_warning=True) is None:  # outside a script run (a job's own thread)
        return None
    return st.session_state.setdefault(OWNER_KEY, uuid.uuid4().hex)


set_owner_source(session_owner)
