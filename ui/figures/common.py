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


def rgba(hex_colour: str, alpha: float) -> str:
    r, g, b = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def band_trace(x, low, high, fill: str, name: str, group: str | None = None, legend: bool = False) -> go.Scatter:
    """A shaded band between ``low`` and ``high``: an area without edge lines or markers (plotly draws markers
    on a scatter of fewer than 20 points unless told otherwise, and they read as data)."""
    x = list(x)
    return go.Scatter(x=x + x[::-1], y=list(high) + list(low)[::-1], fill="toself", fillcolor=fill, mode="lines",
                      line=dict(width=0), hoverinfo="skip", showlegend=legend, name=name, legendgroup=group)
