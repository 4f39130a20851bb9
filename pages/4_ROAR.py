"""ROAR and Recursive ROAR: mask the allegedly important words, retrain, and see how much accuracy is lost."""
import streamlit as st

from evaluation.store import ResultStore
from ui import roar_view, sidebar

st.title("ROAR: remove and retrain")
selection = sidebar.render()
roar_view.banner()
store = ResultStore()

new_tab, studies_tab = st.tabs(["New study", "Studies and results"])
with new_tab:
    if selection is None:
        st.info("Pick a prepared model in the sidebar to start a study (stored studies are under 'Studies').")
    else:
        chosen = roar_view.settings_controls(selection.model)
        if chosen is not None:
            config, error = roar_view.config_for(chosen["kwargs"])
            if error:
                st.error(error)
            else:
                roar_view.cost_panel(config)
                roar_view.start_controls(store, config, chosen["executor"], chosen["address"])
with studies_tab:
    run_id = roar_view.job_list(store)
    if run_id is not None:
        roar_view.results(store, run_id)
    roar_view.import_panel(store)
