"""Long work on one input (sMPRT, repeatability) as a job of the queue: progress, Stop, and the result on return.

The work runs in a job thread of ``JOBS.scheduler`` (owner: this session, so it counts towards the session's
quota, waits in the fair queue in shared mode and is listed on the Jobs page with Stop). Its progress and result
live in a ``Task`` kept in the session state; the page polls it every second while it runs. A Stop ends the work
at its next step (``should_stop``); what the work finished before that is kept when it returns a partial result.
"""
from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from evaluation.runs.jobs import JOBS, current_owner
from models import UserFacingError, WorkStopped

# work(should_stop, progress) -> result; progress(done, total, label)
TaskWork = Callable[[Callable[[], bool], Callable[[int, int, str], None]], object]


@dataclass(eq=False)
class Task:
    job_id: str
    title: str
    done: int = 0
    total: int = 1
    label: str = ""
    result: Any = None  # whatever the work returned
    error: str | None = None
    stopped: bool = False
    finished: threading.Event = field(default_factory=threading.Event)


def task_id(kind: str, inputs: dict) -> str:
    """A job id for ``kind`` on these inputs in this session (a second session's same work is its own job)."""
    payload = json.dumps({"inputs": inputs, "owner": current_owner()}, sort_keys=True, default=str)
    return f"{kind}-{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def start_task(key: str, job_id: str, title: str, work: TaskWork) -> Task | None:
    """Start ``work`` as a job; the task goes to ``st.session_state[key]``. A refusal of the queue (the session's
    quota in shared mode) is shown on the page and gives None."""
    task = Task(job_id, title)

    def target(should_stop: Callable[[], bool]) -> None:
        def progress(done: int, total: int, label: str) -> None:
            task.done, task.total, task.label = done, total, label

        try:
            task.result = work(should_stop, progress)
        except WorkStopped:
            task.stopped = True
        except (UserFacingError, ValueError) as error:
            task.error = str(error)
        finally:
            task.stopped = task.stopped or should_stop()
            task.finished.set()

    def dropped() -> None:  # stopped while it waited in the queue
        task.stopped = True
        task.finished.set()

    try:
        JOBS.scheduler.submit(job_id, target, owner=current_owner(), title=title, on_dropped=dropped)
    except UserFacingError as error:  # a quota refusal (shared mode)
        st.error(str(error))
        return None
    st.session_state[key] = task
    return task


def task_panel(key: str, stop_note: str) -> Task | None:
    """While the session's task under ``key`` runs: its progress and a Stop button, refreshed every second (the
    page reruns when it ends). Returns the task once it has ended (None while it runs or when there is none)."""
    task: Task | None = st.session_state.get(key)
    if task is None:
        return None
    if not task.finished.is_set():
        if st.button("Stop", key=f"{key}-stop"):
            JOBS.stop(task.job_id)
            st.toast(stop_note)

        @st.fragment(run_every=1.0)
        def progress() -> None:
            waiting = JOBS.scheduler.label(task.job_id)
            st.progress(min(1.0, task.done / max(1, task.total)),
                        text=waiting or f"{task.done}/{task.total} · {task.label or 'starting'}")
            if task.finished.is_set():
                st.rerun(scope="app")

        progress()
        return None
    return task
