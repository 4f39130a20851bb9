"""Shared mode on real AppTest sessions: a session's second heavy job is refused with the quota's message (no
traceback), another session's job waits in the queue with its place, and the Jobs page stops it."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore


def two_runs_script():
    """Three Start buttons of the real start/stop widget, each a run whose one cell works until it is stopped."""
    import time

    import streamlit as st

    from evaluation.runs.jobs import Cell, CellStopped, stop_requested
    from evaluation.runs.store import ResultStore
    from ui.widgets.run_control import start_stop

    def work(spec):
        while not stop_requested():
            time.sleep(0.01)
        raise CellStopped()

    store = ResultStore()
    for name in ("first", "second", "third"):
        def start(name=name):
            run_id = store.create_run("quota-test", {"name": name, "session": st.session_state.setdefault(
                "salt", str(time.time()))}, total=1, title=f"{name} heavy job")
            return store, run_id, [Cell("only", {})]
        start_stop(name, f"run-{name}", start, work=work)


@pytest.fixture()
def shared(monkeypatch, one_slot_shared_mode):
    monkeypatch.setenv("EXWB_ADMIN_TOKEN", "s3cret")
    started = []
    yield started
    for run_id in started:
        JOBS.stop(run_id)
        JOBS.wait(run_id, 30)


def test_a_second_heavy_job_of_a_session_is_refused_and_another_session_waits_its_turn(shared):
    alice = AppTest.from_function(two_runs_script, default_timeout=60).run()
    alice.button(key="first-start").click().run()
    first = alice.session_state["run-first"]
    shared.append(first)
    assert JOBS.scheduler.state(first) == "running"
    alice.button(key="second-start").click().run()
    second = alice.session_state["run-second"]
    shared.append(second)
    assert JOBS.scheduler.state(second) == "queued" and not alice.error
    alice.button(key="third-start").click().run()
    assert not alice.exception, alice.exception
    assert "run-third" not in alice.session_state
    [message] = [e.value for e in alice.error]
    assert message.startswith("This session already has 1 job(s) running and 1 waiting") and "stop one" in message

    bob = AppTest.from_function(two_runs_script, default_timeout=60).run()
    bob.button(key="first-start").click().run()  # no quota of Bob's is used, but the one slot is Alice's
    waiting = bob.session_state["run-first"]
    shared.append(waiting)
    assert not bob.error and JOBS.scheduler.state(waiting) == "queued"
    # fair order: Bob's only job goes before Alice's second, though it was queued later
    assert JOBS.status_label({"id": waiting, "status": "queued"}) == "queued (1st in line)"
    assert JOBS.status_label({"id": second, "status": "queued"}) == "queued (2nd in line)"

    jobs_page = AppTest.from_file(str(ROOT / "app_pages" / "13_Jobs.py"), default_timeout=60).run()
    assert not jobs_page.exception, jobs_page.exception
    assert not any(b.key == f"jobs-stop-{first}" for b in jobs_page.button)  # others' jobs need the token
    jobs_page.text_input(key="jobs-admin-token").input("wrong").run()
    assert [e.value for e in jobs_page.error] == ["That is not the admin token."]
    jobs_page.text_input(key="jobs-admin-token").input("s3cret").run()
    assert {f"jobs-stop-{first}", f"jobs-stop-{waiting}"} <= {b.key for b in jobs_page.button}
    assert first not in " ".join(m.value for m in jobs_page.markdown if "session " in m.value)  # ids hidden
    jobs_page.button(key=f"jobs-stop-{waiting}").click().run()
    assert not JOBS.is_running(waiting)
    assert ResultStore().get_run(waiting)["status"] == "cancelled"
