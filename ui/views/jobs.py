"""The Jobs page (layout only): the running and queued jobs of the app's job queue (evaluation/runs/scheduler.py)
with a Stop each. Everyone sees their own session's jobs. In shared mode the jobs of every session need the admin
token (EXWB_ADMIN_TOKEN, typed into a password field); outside shared mode the page lists every job of this
process with no token (one user, one machine)."""
from __future__ import annotations

import hashlib
import hmac
import time

import streamlit as st

import settings
from evaluation.runs.jobs import JOBS
from evaluation.runs.scheduler import RUNNING, JobView
from ui.session_owner import session_owner

UNLOCKED_KEY = "jobs-admin-unlocked"


def owner_name(owner: str | None, mine: str | None) -> str:
    """A session shown without its id (an anonymous short hash), or 'you' / 'no session' (the command line)."""
    if owner is None:
        return "no session"
    if owner == mine:
        return "you"
    return "session " + hashlib.sha256(owner.encode()).hexdigest()[:6]


def admin_unlocked() -> bool:
    """Outside shared mode: always. In shared mode: once this session typed the admin token."""
    if not settings.shared_mode():
        return True
    token = settings.admin_token()
    if not token:
        st.caption("Other sessions' jobs are hidden: the server's admin sets EXWB_ADMIN_TOKEN to see and stop them.")
        return False
    if st.session_state.get(UNLOCKED_KEY):
        return True
    typed = st.text_input("Admin token (shows every session's jobs)", type="password", key="jobs-admin-token")
    if typed:
        if hmac.compare_digest(typed.encode(), token.encode()):
            st.session_state[UNLOCKED_KEY] = True
            return True
        st.error("That is not the admin token.")
    return False


def job_row(job: JobView, mine: str | None, now: float) -> None:
    cols = st.columns([2, 4, 2, 2, 1, 1])
    cols[0].write(owner_name(job.owner, mine))
    cols[1].write(f"{job.title}  \n`{job.run_id}`")
    cols[2].write("running" if job.state == RUNNING else f"queued, {job.place} in line")
    started = job.started if job.started is not None else job.submitted
    cols[3].write(f"{'started' if job.started else 'waiting'} {time.strftime('%H:%M:%S', time.localtime(started))}"
                  f" ({(now - started) / 60:.0f} min ago)")
    cols[4].write(f"{job.cpu_seconds:.0f} CPU s")
    if cols[5].button("Stop", key=f"jobs-stop-{job.run_id}"):
        JOBS.stop(job.run_id)
        st.toast(f"Stopping {job.title}: a queued job leaves the queue, a running one stops at its next step.")


def jobs_view() -> None:
    mine = session_owner()
    every = admin_unlocked()
    jobs = JOBS.scheduler.jobs(mine, every=every)
    mode = ("shared mode: " + f"{settings.job_slots()} jobs run at once; each session may have "
            f"{settings.quota_running()} running and {settings.quota_queued()} waiting"
            + (f", and {settings.quota_cpu_seconds()} CPU seconds per hour" if settings.quota_cpu_seconds() else "")
            if settings.shared_mode() else "single-user mode: every job starts at once, no quotas")
    st.caption(f"This server is in {mode}. CPU seconds count each job's own thread.")
    if mine is not None and settings.shared_mode():
        st.caption(f"Your session used {JOBS.scheduler.cpu_last_hour(mine):.0f} CPU seconds in the last hour.")
    if not jobs:
        st.info("No job is running or waiting" + (" on this server." if every else " in your session."))
        return
    st.markdown(f"**{'Every session' if every else 'Your session'}**: {len(jobs)} job(s)")
    now = time.time()
    for job in jobs:
        job_row(job, mine, now)
