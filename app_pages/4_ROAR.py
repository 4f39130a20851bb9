"""ROAR and Recursive ROAR: mask the allegedly important words, retrain, and see how much accuracy is lost."""
import streamlit as st

from evaluation.runs.store import ResultStore
from ui.views import roar
from ui.widgets import loaders, method_run, sidebar

st.title("ROAR: remove and retrain")
selection = sidebar.render()
roar.banner()
store = ResultStore()

new_tab, studies_tab, synthetic_tab = st.tabs(["New study", "Studies and results", "Synthetic check (paper 001)"])
with new_tab:
    if selection is None:
        st.info("Pick a prepared model in the sidebar to start a study (stored studies are under 'Studies').")
    else:
        chosen = roar.settings_controls(selection.model)
        if chosen is not None:  # AML without its attribution model: the build offer; the study waits for it
            measures = chosen["kwargs"]["measures"]
            ready = method_run.offer_builds(measures, selection.model, loaders.classifier(selection.model), "roar")
            if len(ready) < len(measures):
                st.info("Start the study once the attribution model is built, or leave AML out of the measures.")
                chosen = None
        if chosen is not None:
            config, error = roar.config_for(chosen["kwargs"])
            if error:
                st.error(error)
            else:
                roar.cost_panel(config)
                roar.start_controls(store, config, chosen["executor"], chosen["address"])
with studies_tab:
    run_id = roar.job_list(store, model=None if selection is None else selection.model)
    if run_id is not None:
        roar.results(store, run_id)
    roar.import_panel(store)
with synthetic_tab:
    roar.synthetic_section()
