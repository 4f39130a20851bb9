"""Progress of a stored background run (evaluation, sanity, plausibility, ROAR), shared by every page."""
from __future__ import annotations

import streamlit as st

from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore


def time_left(store: ResultStore, run: dict) -> str:
    """'about N min left' from the mean time of the finished cells, or '' before the first one."""
    seconds = store.cell_seconds(run["id"])
    left = run["total"] - run["done"]
    if not seconds or left <= 0:
        return ""
    return f"about {sum(seconds) / len(seconds) * left / 60:.1f} min left"


def run_progress(store: ResultStore, run_id: str, unit: str = "examples") -> None:
    """A progress bar refreshed every 2 s while the run's background job works; the page reruns when it ends."""
    running = JOBS.is_running(run_id)

    @st.fragment(run_every=2.0 if running else None)
    def progress() -> None:
        run = store.get_run(run_id)
        if run is None:
            return
        left = time_left(store, run)
        st.progress(min(1.0, run["done"] / max(1, run["total"])),
                    text=f"{run['done']} of {run['total']} {unit} · {run['status']}" + (f" · {left}" if left else ""))
        if run["meta"].get("error"):
            st.error(run["meta"]["error"])
        if running and not JOBS.is_running(run_id):
            st.rerun(scope="app")

    progress()
