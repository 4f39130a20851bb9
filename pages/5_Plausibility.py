"""Plausibility: agreement of explanations with human rationales (agreement with people, not faithfulness)."""
import streamlit as st

from ui import explain_view, plausibility_view, sidebar

st.title("Plausibility")
selection = sidebar.render()
plausibility_view.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar (a dataset with human rationales, e.g. "
            "sst-rationales or eraser-movies, or mark the words yourself).")
    st.stop()

classifier, encoding = explain_view.classifier_and_encoding(selection)
config, preset, options = plausibility_view.config_controls()
choices = explain_view.method_picker(default=plausibility_view.DEFAULT_METHODS, key="plaus-methods")
example_tab, dataset_tab = st.tabs(["This example", "Over a dataset"])
with example_tab:
    plausibility_view.example_section(selection, classifier, encoding, choices, config, preset)
with dataset_tab:
    plausibility_view.dataset_section(selection, choices, options, config, preset)
