"""Plotly figures (no research logic: they draw numbers computed elsewhere)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def probability_bars(labels: list[str], probabilities: np.ndarray, highlight: int | None = None) -> go.Figure:
    colours = ["#2166ac" if i == highlight else "#9ecae1" for i in range(len(labels))]
    figure = go.Figure(go.Bar(x=probabilities, y=labels, orientation="h", marker_color=colours,
                              text=[f"{p:.1%}" for p in probabilities], textposition="auto",
                              hovertemplate="%{y}: %{x:.4f}<extra></extra>"))
    figure.update_layout(height=60 + 34 * len(labels), margin=dict(l=10, r=10, t=10, b=10),
                         xaxis=dict(range=[0, 1], title="probability"), yaxis=dict(autorange="reversed"))
    return figure
