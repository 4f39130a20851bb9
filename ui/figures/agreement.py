"""Plotly figures of the heatmaps page: the method-agreement matrix (numbers computed in evaluation/)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from evaluation.agreement import MEASURES, Agreement


def agreement_figure(agreement: Agreement) -> go.Figure:
    labels = list(agreement.labels)
    values = np.where(np.isnan(agreement.matrix), None, np.round(agreement.matrix, 3))
    text = [["n/a" if v is None else f"{v:.2f}" for v in row] for row in values]
    figure = go.Figure(go.Heatmap(
        z=values.tolist(), x=labels, y=labels, zmin=-1, zmax=1, colorscale="RdBu", text=text,
        texttemplate="%{text}", hovertemplate="%{y} vs %{x}: %{z}<extra></extra>",
        colorbar=dict(title=MEASURES[agreement.measure][0])))
    size = 40 + 34 * len(labels)
    figure.update_layout(height=max(320, size + 120), margin=dict(l=10, r=10, t=30, b=10),
                         title=dict(text=f"{MEASURES[agreement.measure][0]} between methods' word scores ("
                                         f"{'|score|' if agreement.absolute else 'signed scores'})",
                                    font=dict(size=13)),
                         yaxis=dict(autorange="reversed"), xaxis=dict(tickangle=-40))
    return figure
