"""Streamlit building blocks: figures, widgets, the shared sidebar and cached loaders (no research logic)."""
