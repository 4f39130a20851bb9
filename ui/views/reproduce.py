"""Reproduce page blocks (layout only): choose a paper and a budget, start / resume / stop its reproduce run as a
background job with progress, and show the findings table the generated page has (with the page as a download).
The run is ``evaluation/reproduce``'s, the same as ``cli.py reproduce``."""
from __future__ import annotations

import streamlit as st

from evaluation.reproduce import (
    BUDGETS,
    KIND,
    PAPERS,
    estimate,
    markdown,
    reproduce_cell,
    results,
    start_reproduce,
    table,
)
from evaluation.reproduce.findings import NOT, NOT_RUN, PARTLY, REPRODUCED
from evaluation.runs.store import ResultStore
from models.machine import describe
from ui.widgets.run_control import start_stop
from ui.widgets.run_picker import pick_run

RUN_KEY = "reproduce_run"
COLOURS = {REPRODUCED: "#d8f0d8", PARTLY: "#fff2cc", NOT: "#f8d7da", NOT_RUN: "#eeeeee"}


def banner() -> None:
    st.markdown("**Do the papers' findings hold here?** A paper's headline experiments as one stored run over "
                "independently trained models (training seeds), each finding with the paper's number, ours with its "
                "95 % interval over the seeds, and a verdict with its reason. Stop it any time: starting again "
                "resumes it, recomputing no finished cell.")


def controls() -> tuple[str, str]:
    c1, c2 = st.columns([3, 2])
    paper = c1.selectbox("Paper", list(PAPERS), format_func=lambda p: f"{p}: {PAPERS[p]}", key="reproduce-paper")
    budget = c2.selectbox("Budget", list(BUDGETS), index=list(BUDGETS).index("tiny"), key="reproduce-budget",
                          help="tiny: one-block models trained in seconds (a first look); quick: all five papers "
                               "within about 3 hours on a 2-core CPU; full: the papers' sizes (a GPU or Ray)")
    cost = estimate(paper, budget)
    st.caption(f"Estimate: about {cost['total'] / 60:.0f} min on this machine's CPU (models/metering.py's cold rate; "
               f"slower while the machine is shared); seeds {', '.join(map(str, BUDGETS[budget].seeds))}.")
    return paper, budget


def run_controls(paper: str, budget: str) -> str | None:
    """Start / resume / stop the run as a background job; the run to show (progress included)."""
    store = ResultStore()
    run_id = start_stop("reproduce", RUN_KEY, lambda: start_reproduce(paper, budget, store, machine=describe()),
                        work=reproduce_cell, label="Start (or resume) the reproduction")
    return pick_run(store, store.list_runs(KIND), run_id, "reproduce-show-run", None, "reproduce runs", unit="cells")


def show(store: ResultStore, run_id: str) -> None:
    try:
        report = results(store, run_id)
    except KeyError:
        st.error("This run is no longer in the store.")
        return
    st.subheader(f"Paper {report['paper']}: {report['title']}")
    st.caption(f"Budget `{report['budget']['name']}` · run `{run_id}` · {report['done']} of {report['total']} cells "
               f"({report['status']})")
    frame = table(report)
    st.dataframe(frame.style.map(lambda v: f"background-color: {COLOURS[v]}" if v in COLOURS else "",
                                 subset=["verdict"]), hide_index=True, key=f"reproduce-table-{run_id}")
    for row in report["rows"]:
        for seed, error in row["errors"].items():
            st.warning(f"{row['title']}, seed {seed} failed: {error}. Start again to retry it.")
    command = f"python cli.py reproduce --paper {report['paper']} --budget {report['budget']['name']}"
    st.download_button("Download the page (markdown)", markdown(report, command), f"paper-{report['paper']}.md",
                       "text/markdown", key=f"reproduce-md-{run_id}")
