"""Faithfulness page, "This input": the measures that are not removal curves (NAOPC, soft sufficiency /
comprehensiveness) with the random baseline. Numbers from evaluation/faithfulness/other_measures.py; controls
generated from each measure's param() schema."""
from __future__ import annotations

import json

import streamlit as st

from evaluation.faithfulness import other_measures
from evaluation.faithfulness.random_band import NOT_DISTINGUISHABLE
from evaluation.metric import EVALUATORS
from explainers import Explanation, schema
from models import UserFacingError

from ui.widgets.tables import labelled, show_table

KEY = "faith-measures"


def option_controls(evaluator_ids: list[str]) -> dict:
    """One number input per integer option of the chosen measures (all of them are counts today)."""
    values = {}
    for evaluator_id in evaluator_ids:
        specs = schema(other_measures.OPTIONS[evaluator_id])
        for column, spec in zip(st.columns(max(1, len(specs))), specs):
            values[spec.name] = int(column.number_input(
                spec.label, int(spec.min or 0), int(spec.max or 10**6), int(spec.default), key=f"{KEY}-{spec.name}",
                help=spec.help or None))
    return values


def measures_section(classifier, encoding, explanations: dict[str, Explanation], config: dict, selection) -> None:
    st.markdown("##### Normalized and in-distribution measures")
    chosen = st.multiselect("Also measure", list(other_measures.MEASURES), default=[], key=KEY,
                            format_func=lambda e: EVALUATORS[e].label,
                            help="NAOPC rescales AOPC between the worst and best orderings of the words (comparable "
                                 "across models; exact bounds cost 2^n perturbed inputs); soft sufficiency / "
                                 "comprehensiveness drop embedding elements by importance.")
    if not chosen or not explanations:
        return
    options = {**config["options"], **option_controls(chosen)}
    example = selection.example
    try:
        table = other_measures.measures_table(classifier, encoding, explanations, chosen, options, example,
                                              config["n_random"])
    except UserFacingError as error:
        st.error(str(error))
        return
    show_table(labelled(other_measures.wide(table), header=True), f"{KEY}-table", hide_index=False,
               why_missing="the measure is not defined here (e.g. every ordering gives the same AOPC)")
    searches = {detail.get("search") for detail in table["details"].map(_json) if detail.get("search")}
    flagged = int((table["vs_random"] == NOT_DISTINGUISHABLE).sum())
    st.caption(("NAOPC bounds: " + ", ".join(sorted(searches)) + " search. " if searches else "") +
               f"Random baseline: {config['n_random']} random explanations, mean [95 % band]"
               + (f"; ≈ random marks {flagged} value(s) inside it." if flagged else "."))
    st.download_button("Download these measures (CSV)", table.to_csv(index=False), "faithfulness_measures.csv",
                       "text/csv", key=f"{KEY}-csv")


def _json(text: str) -> dict:
    return json.loads(text) if text else {}
