"""A background task on one input (sMPRT, repeatability) refused by the session's quota: the page shows the quota's
message, no traceback, and no task is kept (the page would otherwise poll a job that never ran)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from evaluation.runs.jobs import JOBS


def three_tasks_script():
    import threading

    import streamlit as st

    from ui.widgets.background_task import start_task, task_id

    release = st.session_state.setdefault("release", threading.Event())

    def work(should_stop, progress):
        while not (should_stop() or release.is_set()):
            release.wait(0.01)
        return "done"

    for name in ("first", "second", "third"):
        if st.button(name, key=f"{name}-start"):
            task = start_task(f"task-{name}", task_id(name, {"n": name}), f"{name} task", work)
            st.session_state[f"returned-{name}"] = task is not None


@pytest.fixture()
def shared(one_slot_shared_mode):
    sessions = []
    yield sessions
    for at in sessions:
        at.session_state["release"].set()
        for name in ("first", "second"):
            task = at.session_state[f"task-{name}"] if f"task-{name}" in at.session_state else None
            if task is not None:
                JOBS.stop(task.job_id)
                assert task.finished.wait(30)


def test_a_refused_task_shows_the_quota_message_and_keeps_no_task(shared):
    at = AppTest.from_function(three_tasks_script, default_timeout=60).run()
    shared.append(at)
    at.button(key="first-start").click().run()
    at.button(key="second-start").click().run()  # running 1 + queued 1: the quota is full
    assert at.session_state["returned-first"] and at.session_state["returned-second"] and not at.error
    at.button(key="third-start").click().run()
    assert not at.exception, at.exception
    assert at.session_state["returned-third"] is False and "task-third" not in at.session_state
    [message] = [e.value for e in at.error]
    assert message.startswith("This session already has 1 job(s) running and 1 waiting") and "stop one" in message
