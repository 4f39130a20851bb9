"""Jobs: the running and queued jobs of the app (every session's for the admin) with Stop."""
import streamlit as st

from ui.views.jobs import jobs_view

st.title("Jobs")
jobs_view()
