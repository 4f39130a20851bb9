"""Streamlit widgets: the sidebar, controls generated from parameter schemas, the heatmap HTML, run progress."""
