"""Adversarial attacks on explanations: move a heatmap with a perturbation the prediction does not notice."""
import streamlit as st

from ui.views import adversarial, heatmaps
from ui.widgets import sidebar

st.title("Adversarial attacks on explanations")
selection = sidebar.render()
adversarial.banner()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

# a text longer than the window is read whole (its prediction from its windows); the attack runs over its windows
classifier, encoding = heatmaps.classifier_and_encoding(selection)
heatmaps.prediction_panel(classifier, encoding, selection)
chosen = adversarial.controls()
if chosen is None:
    st.stop()
methods, config = chosen
one_tab, dataset_tab = st.tabs(["This input", "Over a dataset"])
with one_tab:
    adversarial.single_input(classifier, encoding, methods, config)
with dataset_tab:
    adversarial.dataset_section(selection.model, methods, config)
