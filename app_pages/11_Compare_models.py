"""Compare models: the same input and methods on several models side by side, and the same checks on several models
over a dataset (paper 003's size and architecture comparisons)."""
import streamlit as st

from ui.views import heatmaps, model_comparison, model_comparison_dataset
from ui.widgets import sidebar

st.title("Compare models")
selection = sidebar.render()
one_input, dataset_level = st.tabs(["One input", "Dataset level"])
with dataset_level:  # drawn first: the one-input tab may stop the script
    model_comparison_dataset.section(selection.model if selection is not None else None)
with one_input:
    model_comparison.banner()
    if selection is None:
        st.info("Pick a prepared model and an input in the sidebar.")
        st.stop()
    specs = model_comparison.model_picker(selection.model)
    choices = heatmaps.method_picker(default=model_comparison.DEFAULT_METHODS, key="cmp-methods")
    methods = model_comparison.method_specs(choices)
    if not methods:
        st.info("Choose at least one method.")
        st.stop()
    comparison = model_comparison.compute(specs, selection.text, selection.pair, methods)
    if comparison is not None:
        model_comparison.predictions(comparison)
        model_comparison.rows(comparison, selection.level)
