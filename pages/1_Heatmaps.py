"""Heatmaps: every selected explanation method side by side for the current input."""
import streamlit as st

from ui import explain_view, sidebar

st.title("Heatmaps")
selection = sidebar.render()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = explain_view.classifier_and_encoding(selection)
explain_view.prediction_panel(classifier, encoding, selection)
choices = explain_view.method_picker()
normalization, absolute = explain_view.display_options()
results = explain_view.compute(choices, classifier, encoding, selection.target)
human = list(selection.example.rationale) if selection.example is not None and selection.example.rationale else None
if human is not None:
    st.caption("Underlined words: the human rationale of this dataset example.")
explain_view.render_rows(results, selection.level, normalization, absolute, human=human)
