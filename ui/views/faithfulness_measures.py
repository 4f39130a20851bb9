"""Faithfulness page, "This input": the measures that are not removal curves (NAOPC, soft sufficiency /
comprehensiveness) with the random baseline. Numbers from evaluation/faithfulness/other_measures.py; controls
generated from each measure's param() schema.

"Over a dataset": agreement between methods (the ``agreement`` group of evaluation/agreement/dataset.py), the pair
table with intervals and the random band, and the matrix of mean agreement."""
from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from evaluation.agreement import dataset as agreement_dataset
from evaluation.agreement.measures import CAVEAT, MEASURES, TOP_K, Agreement
from evaluation.baselines import NOT_DISTINGUISHABLE
from evaluation.faithfulness import other_measures
from evaluation.metric import EVALUATORS
from explainers import Explanation, label_for, schema
from models import UserFacingError
from ui.figures.agreement import agreement_figure
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


CONTRAST_READ = ("With the sidebar's contrast class, these measures read p(target) - p(contrast) wherever they read "
                 "p(target), as the removal curves above do (docs/peers.md).")


def measures_section(classifier, encoding, explanations: dict[str, Explanation], config: dict, selection) -> None:
    st.markdown("##### Normalized and in-distribution measures")
    chosen = st.multiselect("Also measure", list(other_measures.MEASURES), default=[], key=KEY,
                            format_func=lambda e: EVALUATORS[e].label,
                            help="NAOPC rescales AOPC between the worst and best orderings of the words (comparable "
                                 "across models; exact bounds cost 2^n perturbed inputs); soft sufficiency / "
                                 "comprehensiveness drop embedding elements by importance.")
    if not chosen or not explanations:
        return
    if config["options"].get("contrast") is not None:  # with a contrast they read p(target) - p(contrast)
        st.caption(CONTRAST_READ)
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


# ----- over a dataset: agreement between methods ---------------------------------------------------------------
def agreement_run_section(table: pd.DataFrame, run: dict, key: str = "faith") -> None:
    """The pair table of a run's ``agreement`` group for one measure (mean, 95 % CI, the random band and the
    verdict) and the methods x methods matrix of the means; nothing for a run without it."""
    pairs = agreement_dataset.pair_table(table)
    if pairs.empty:
        return
    run_id = run["id"]
    st.markdown("##### Agreement between methods (Krishna et al. 2022)")
    present = [m for m in agreement_dataset.ORDER if m in set(pairs["measure"])]
    if not present:
        return
    measure = st.selectbox("Agreement measure", present, key=f"{key}-agreement-measure-{run_id}",
                           format_func=lambda m: MEASURES[m][0]) or present[0]
    k, absolute = agreement_dataset.settings(run["config"].get("options", {}))
    methods = [m for m in run["config"].get("methods", []) if m in set(pairs["method A"]) | set(pairs["method B"])]
    matrix = agreement_dataset.mean_matrix(pairs, measure, methods)
    figure = agreement_figure(Agreement(tuple(methods), tuple(map(label_for, methods)), measure, absolute, matrix),
                              k if measure in TOP_K else None,
                              title=f"Mean {MEASURES[measure][0].replace('@k', f'@{k}')} over the examples")
    st.plotly_chart(figure, key=f"{key}-agreement-chart-{run_id}-{measure}", width="stretch")
    chosen = agreement_dataset.pair_rows(pairs, measure)
    show_table(labelled(chosen, columns=("method A", "method B")), f"{key}-agreement-table-{run_id}",
               why_missing="undefined for every example (a method with constant scores has no correlation)")
    flagged = int((chosen["vs random"] == NOT_DISTINGUISHABLE).sum()) if "vs random" in chosen else 0
    st.caption(f"{MEASURES[measure][1]}; mean over the examples with a percentile-bootstrap 95 % CI. Random band: the "
               f"same measure between two independent random attributions of the same words (mean, 95 % range of "
               f"the per-draw dataset means); {flagged} pair(s) ≈ random (the paired CI of pair - random contains "
               f"0). Words ranked by {'|score|' if absolute else 'signed score'}"
               f"{f', k = {k}' if measure in TOP_K else ''}. {CAVEAT}")
    exported = agreement_dataset.with_settings(pairs, run["config"].get("options", {}))  # k and ranking travel
    st.download_button("Download the pair table (CSV)", exported.to_csv(index=False), f"{run_id}-agreement.csv",
                       "text/csv", key=f"{key}-agreement-csv-{run_id}")
