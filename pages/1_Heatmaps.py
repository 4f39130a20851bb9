"""Heatmaps: every explanation method side by side for the current input, with agreement and export."""
import streamlit as st

from ui import compare_view, explain_view, export_view, sidebar

st.title("Heatmaps")
selection = sidebar.render()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = explain_view.classifier_and_encoding(selection)
target = explain_view.prediction_panel(classifier, encoding, selection)
choices = explain_view.method_picker(default=explain_view.page_methods())
normalization, absolute = explain_view.display_options()
cost = explain_view.cost_preview(choices, classifier, encoding, selection.target)
results = explain_view.compute(choices, classifier, encoding, selection.target)
explain_view.cost_settled(cost, choices, results, classifier, encoding)
human = list(selection.example.rationale) if selection.example is not None and selection.example.rationale else None
if human is not None:
    st.caption("Underlined words: the human rationale of this dataset example.")
if encoding.pair is not None:
    st.caption("Sentence pair: scores cover both segments; ‖ marks the boundary between them.")
explain_view.render_rows(results, selection.level, normalization, absolute, human=human)

explanations = compare_view.finished(results)
compare_view.agreement_panel(explanations)
compare_view.top_words_panel(explanations, absolute)
context = export_view.page_context(classifier, encoding, target)
export_view.export_panel(export_view.ExportBundle(explanations, selection.level, normalization, absolute, context))
