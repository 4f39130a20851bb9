"""Sanity checks: randomize the model (layer by layer, or only its head) and see which explanations survive."""
import streamlit as st

from ui.views import heatmaps, sanity, sanity_measures
from ui.widgets import method_run, sidebar

st.title("Sanity checks")
selection = sidebar.render()
sanity.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = heatmaps.classifier_and_encoding(selection)
target = heatmaps.prediction_panel(classifier, encoding, selection)
choices = heatmaps.method_picker(default=sanity.DEFAULT_METHODS, key="sanity-methods")
choices = method_run.offer_builds(choices, selection.model, classifier, key="sanity")  # AML without its model
config = sanity.settings_controls()
layers_tab, head_tab, repeat_tab, data_tab, dataset_tab = st.tabs(
    ["Layer randomization", "Head randomization (paper 000)", "Repeatability across seeds", "Data randomization",
     "Over a dataset"])
with layers_tab:
    sanity.layer_section(classifier, encoding, choices, target, config, selection.level)
with head_tab:
    sanity.head_section(classifier, encoding, choices, target, selection.level)
with repeat_tab:
    sanity_measures.repeatability_section(classifier, encoding, sanity.chosen_explainers(choices), target,
                                          sanity.seeds_or_message)
with data_tab:
    sanity_measures.data_randomization_section(selection.model, classifier, encoding,
                                               sanity.chosen_explainers(choices), target)
with dataset_tab:
    sanity.dataset_section(selection, choices, config, classifier.num_labels)
