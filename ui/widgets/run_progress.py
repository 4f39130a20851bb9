"""Progress of a stored background run (evaluation, sanity, plausibility, ROAR), shared by every page."""
from __future__ import annotations

import time

import streamlit as st

from evaluation.runs.jobs import JOBS
from evaluation.runs.store import ResultStore
from models.metering import cells_left_seconds


def time_left(store: ResultStore, run: dict, now: float | None = None, running: bool | None = None) -> str:
    """'about N min left' from the finished cells and the running one (models/metering.py), or '' when nothing
    is known yet. The running cell started when the run was last updated (its start or the last finished cell)."""
    left_cells = run["total"] - run["done"]
    if left_cells <= 0:
        return ""
    running = JOBS.is_running(run["id"]) if running is None else running
    elapsed = max(0.0, (time.time() if now is None else now) - run["updated"]) if running else 0.0
    seconds = cells_left_seconds(store.cell_seconds(run["id"]), left_cells, elapsed,
                                 prior=run["meta"].get("estimated_cell_seconds"))
    if seconds is None:
        return f"first cell running for {elapsed:.0f} s" if running else ""
    if seconds <= 0:
        return f"last cell running for {elapsed / 60:.1f} min, longer than the others" if running else ""
    return f"about {seconds / 60:.1f} min left"


def training_text(training: dict) -> str:
    text = f"Training step {training['step']} of {training['total']}"
    if training.get("loss") is not None:
        text += f" · loss {training['loss']:.4f}"
    if training.get("validation") is not None:
        text += f" · best validation score {training['validation']:.4f}"
    return text


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
                    text=f"{run['done']} of {run['total']} {unit} · {JOBS.status_label(run)}" +
                         (f" · {left}" if left else ""))
        training = run["meta"].get("training")  # a cell that trains reports its steps (evaluation/suite/aml_build.py)
        if training and run["done"] < run["total"]:
            st.progress(min(1.0, training["step"] / max(1, training["total"])), text=training_text(training))
        if run["meta"].get("error"):
            st.error(run["meta"]["error"])
        if running and not JOBS.is_running(run_id):
            st.rerun(scope="app")

    progress()
