"""Figure builders (plotly / matplotlib): they draw numbers computed in evaluation/, nothing more."""
