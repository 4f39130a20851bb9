"""Faithfulness: removal curves and metrics with a random baseline, the bias matrix, dataset runs, known features."""
from dataclasses import replace

import streamlit as st

from ui.views import (
    faithfulness,
    faithfulness_ffid,
    faithfulness_measures,
    heatmaps,
    known_feature_long,
    perturbation_shift,
    sparsity,
)
from ui.widgets import method_run, sidebar

st.title("Faithfulness")
selection = sidebar.render()
faithfulness.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = heatmaps.classifier_and_encoding(selection, units=True)  # words or sentences
panel = st.container()  # the prediction, and the one class this page explains and measures (chosen below it)
choice = faithfulness.target_control(selection, classifier)
target = faithfulness.explained_class(selection, choice)
with panel:
    heatmaps.prediction_panel(classifier, encoding, replace(selection, target=target))
choices = heatmaps.method_picker(default=faithfulness.DEFAULT_METHODS, key="faith-methods")
choices = method_run.offer_builds(choices, selection.model, classifier, key="faith")  # AML without its model
config = faithfulness.options_controls(choice)
explanations = faithfulness.explanations_for(choices, classifier, encoding, target)
input_tab, bias_tab, dataset_tab, shift_tab, known_tab = st.tabs(
    ["This input", "Bias matrix (paper 000)", "Over a dataset", "Out of distribution (paper 000)",
     "Known-feature task (paper 003)"])
with input_tab:
    faithfulness.input_section(classifier, encoding, explanations, config, selection)
    faithfulness_measures.measures_section(classifier, encoding, explanations, config, selection)
    faithfulness_ffid.ffid_section(classifier, encoding, explanations, config, selection)
    sparsity.input_section(explanations)
with bias_tab:
    faithfulness.bias_section(classifier, encoding, explanations, config, selection)
with dataset_tab:
    faithfulness.dataset_section(selection, choices, config)
with shift_tab:
    perturbation_shift.section(selection.model, classifier, config["options"]["seed"])
with known_tab:
    if known_feature_long.documents_chosen():  # known-feature-long: documents read in windows
        known_feature_long.section(choices)
    else:
        faithfulness.known_feature_section(choices)
