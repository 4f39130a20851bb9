"""Streamlit building blocks: figures, widgets, the shared sidebar and cached loaders (no research logic).

`ui/figures/` imports no Streamlit (the Python library draws with it); the session registers itself as
the owner of the jobs pages start in `ui/widgets/__init__.py`.
"""
