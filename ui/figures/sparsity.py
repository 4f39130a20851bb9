"""Sparsity curves (paper 001 App. E, Figs. 5-6): cumulative importance share against top-k words and top-x % of the
words, one line per method with its 95 % band where there is one (numbers from ``evaluation.faithfulness.sparsity``)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from evaluation.faithfulness.sparsity import TOP_K, TOP_X


def sparsity_figure(frame: pd.DataFrame) -> go.Figure:
    figure = make_subplots(rows=1, cols=2, subplot_titles=("Top-k sparsity (Fig. 5)", "Top-x % sparsity (Fig. 6)"))
    for number, (method, group) in enumerate(frame.groupby("method", sort=False)):
        colour = qualitative.Plotly[number % len(qualitative.Plotly)]
        for column, axis in enumerate((TOP_K, TOP_X), start=1):
            part = group[group["axis"] == axis]
            if (part["n"] > 1).any():
                figure.add_trace(go.Scatter(x=list(part["x"]) + list(part["x"])[::-1],
                                            y=list(part["high"]) + list(part["low"])[::-1], fill="toself",
                                            fillcolor=colour, opacity=0.15, line=dict(width=0), hoverinfo="skip",
                                            showlegend=False), row=1, col=column)
            figure.add_trace(go.Scatter(x=part["x"], y=part["mean"], mode="lines+markers", name=method,
                                        line=dict(color=colour), legendgroup=method, showlegend=column == 1),
                             row=1, col=column)
    figure.update_xaxes(title_text="k (words)", row=1, col=1)
    figure.update_xaxes(title_text="x (% of the words)", row=1, col=2)
    figure.update_yaxes(title_text="share of sum |a|", range=[0, 1.02], row=1, col=1)
    figure.update_yaxes(range=[0, 1.02], row=1, col=2)
    figure.update_layout(height=360, margin=dict(l=10, r=10, t=40, b=10))
    return figure
