"""Sanity checks: randomize the model (layer by layer, or only its head) and see which explanations survive."""
import streamlit as st

from ui import explain_view, sanity_view, sidebar

st.title("Sanity checks")
selection = sidebar.render()
sanity_view.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = explain_view.classifier_and_encoding(selection)
target = explain_view.prediction_panel(classifier, encoding, selection)
choices = explain_view.method_picker(default=sanity_view.DEFAULT_METHODS, key="sanity-methods")
config = sanity_view.settings_controls()
layers_tab, head_tab, dataset_tab = st.tabs(["Layer randomization", "Head randomization (paper 000)",
                                             "Over a dataset"])
with layers_tab:
    sanity_view.layer_section(classifier, encoding, choices, target, config, selection.level)
with head_tab:
    sanity_view.head_section(classifier, encoding, choices, target, selection.level)
with dataset_tab:
    sanity_view.dataset_section(selection, choices, config, classifier.num_labels)
