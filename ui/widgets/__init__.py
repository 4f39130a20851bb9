"""Streamlit widgets: the sidebar, controls generated from parameter schemas, the heatmap HTML, run progress."""

from ui import session_owner  # noqa: F401,E402  (registers the session as the owner of the jobs pages start)
