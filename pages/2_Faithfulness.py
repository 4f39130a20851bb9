"""Faithfulness: removal curves and metrics with a random baseline, the bias matrix, dataset runs, known features."""
import streamlit as st

from ui import explain_view, faithfulness_view, sidebar

st.title("Faithfulness")
selection = sidebar.render()
faithfulness_view.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = explain_view.classifier_and_encoding(selection)
explain_view.prediction_panel(classifier, encoding, selection)
choices = explain_view.method_picker(default=faithfulness_view.DEFAULT_METHODS, key="faith-methods")
config = faithfulness_view.options_controls(selection)
explanations = faithfulness_view.explanations_for(choices, classifier, encoding, selection.target)
input_tab, bias_tab, dataset_tab, known_tab = st.tabs(["This input", "Bias matrix (paper 000)", "Over a dataset",
                                                       "Known-feature task (paper 003)"])
with input_tab:
    faithfulness_view.input_section(classifier, encoding, explanations, config, selection)
with bias_tab:
    faithfulness_view.bias_section(classifier, encoding, explanations, config, selection)
with dataset_tab:
    faithfulness_view.dataset_section(selection, choices, config)
with known_tab:
    faithfulness_view.known_feature_section(choices)
