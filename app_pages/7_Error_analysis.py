"""Error analysis: a dataset's predictions, filters, the confusion matrix, open an example everywhere, explain a
slice, and the words that raise the error rate."""
import streamlit as st

from ui.views import counterfactual_generators, errors
from ui.widgets import loaders, sidebar

st.title("Error analysis")
selection = sidebar.render()
if selection is None:
    st.info("Pick a prepared model in the sidebar.")
    st.stop()
classifier = loaders.classifier(selection.model)
dataset_id = errors.dataset_picker()
if dataset_id is None:
    st.stop()
examples = errors.examples_of(dataset_id, classifier)
table = errors.predictions(classifier, selection.model, dataset_id, examples)
if table is None:
    st.stop()
errors.summary(table)
if not table.has_labels:
    errors.labels_needed(table)
    st.stop()

chosen = errors.filters(table)
shown = errors.filtered(table.frame, chosen)
if shown is None:
    st.stop()
st.subheader("Confusion matrix")
shown = errors.confusion_cell(table, shown)
st.subheader("Embedding map")
shown = errors.embedding_map(classifier, examples, table, shown)
st.subheader("Counterfactuals of the slice")
shown = counterfactual_generators.slice_panel(classifier, examples, shown)
st.subheader("Predictions")
if shown.empty:
    st.info("No example matches these filters; loosen them (or clear the search) to see some.")
else:
    errors.table_view(shown, len(table.frame))
    errors.open_example(shown, dataset_id)
st.subheader("Explain a slice")
errors.slice_panel(classifier, examples, table, shown)
st.subheader("Saved slices")
errors.saved_slices_panel(table, shown, chosen)
st.subheader("Shortcut words")
errors.shortcut_panel(table)
