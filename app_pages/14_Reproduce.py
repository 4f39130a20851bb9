"""Reproduce: a paper's headline findings over training seeds, with the paper's numbers and verdicts."""
import streamlit as st

from evaluation.runs.store import ResultStore
from ui.views import reproduce

st.title("Reproduce the papers")
reproduce.banner()
paper, budget = reproduce.controls()
run_id = reproduce.run_controls(paper, budget)
if run_id is not None:
    reproduce.show(ResultStore(), run_id)
