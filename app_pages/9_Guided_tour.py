"""Guided tour: prediction, one method, compare, a sanity check, faithfulness; a question before each answer."""
import streamlit as st

from ui.views import heatmaps, tour
from ui.widgets import sidebar

st.title("Guided tour")
selection = sidebar.render()
if selection is None:
    st.info("Pick a prepared model and an input in the sidebar.")
    st.stop()

classifier, encoding = heatmaps.classifier_and_encoding(selection)  # a long text whole, in windows
step, method = tour.header()
tour.show_step(step, method, classifier, encoding, selection)
