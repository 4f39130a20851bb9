"""Report card: which method should I trust for this model? Every check, verdicts by written rules, an ordering."""
import streamlit as st

from evaluation.runs.store import ResultStore
from ui.views import report_card
from ui.widgets import sidebar

st.title("Report card")
selection = sidebar.render()
report_card.banner()
if selection is None:
    st.info("Pick a prepared model in the sidebar.")
    st.stop()

dataset, methods, config = report_card.settings_controls()
run_id = report_card.run_controls(selection.model, dataset, methods, config)
if run_id is not None:
    report_card.show_card(ResultStore(), run_id)
st.subheader("Several models side by side")
report_card.side_by_side(ResultStore(), run_id)
