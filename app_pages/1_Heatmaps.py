"""Heatmaps: every explanation method side by side for the current input, with agreement and export."""
import streamlit as st

from ui.views import compare, export, heatmaps
from ui.widgets import sidebar

st.title("Heatmaps")
selection = sidebar.render()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = heatmaps.classifier_and_encoding(selection, units=True)  # words or sentences
target = heatmaps.prediction_panel(classifier, encoding, selection)
choices = heatmaps.method_picker(default=heatmaps.page_methods())
normalization, absolute = heatmaps.display_options()
explaining = heatmaps.fast_mode(selection, classifier, encoding)  # opt-in; the prediction above stays full precision
cost = heatmaps.cost_preview(choices, explaining, encoding, selection.target)
human = list(selection.example.rationale) if selection.example is not None and selection.example.rationale \
    and not hasattr(encoding, "groups") else None  # a word mask: not drawn over sentence units
if human is not None:
    st.caption("Underlined words: the human rationale of this dataset example.")
if encoding.pair is not None:
    st.caption("Sentence pair: scores cover both segments; ‖ marks the boundary between them.")
rows = heatmaps.Rows([c.method_id for c in choices], selection.level, normalization, absolute, human=human,
                     model=selection.model, classifier=explaining)  # each row drawn as soon as its method finishes
results = heatmaps.compute(choices, explaining, encoding, selection.target, background=True, rows=rows,
                          prepared=cost.prepared)  # Stop; each method created, keyed, probed once
heatmaps.cost_settled(cost, choices, results, explaining, encoding)
rows.finish(results)

explanations = compare.finished(results)
heatmaps.matrix_view(explanations, selection.level, absolute)
compare.agreement_panel(explanations)
compare.top_words_panel(explanations, absolute)
context = export.page_context(classifier, encoding, heatmaps.explained_class(explaining, encoding, selection, target),
                             explaining)
export.export_panel(export.ExportBundle(explanations, selection.level, normalization, absolute, context))
