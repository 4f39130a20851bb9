"""Streamlit building blocks: figures, widgets, the shared sidebar and cached loaders (no research logic)."""

from ui import session_owner  # noqa: F401  (registers the session as the owner of the jobs pages start)
