"""Plausibility: agreement of explanations with human rationales (agreement with people, not faithfulness)."""
import streamlit as st

from ui.views import heatmaps, plausibility
from ui.widgets import method_run, sidebar

st.title("Plausibility")
selection = sidebar.render()
plausibility.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar (a dataset with human rationales, e.g. "
            "sst-rationales or eraser-movies, or mark the words yourself).")
    st.stop()

classifier, encoding = heatmaps.classifier_and_encoding(selection)
config, preset, options = plausibility.config_controls()
choices = heatmaps.method_picker(default=plausibility.DEFAULT_METHODS, key="plaus-methods")
choices = method_run.offer_builds(choices, selection.model, classifier, key="plaus")  # AML without its model
example_tab, dataset_tab = st.tabs(["This example", "Over a dataset"])
with example_tab:
    plausibility.example_section(selection, classifier, encoding, choices, config, preset)
with dataset_tab:
    plausibility.dataset_section(selection, choices, options, config, preset)
