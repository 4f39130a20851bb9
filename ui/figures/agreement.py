"""Plotly figures of the heatmaps page: the method-agreement matrix (numbers computed in evaluation/)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from evaluation.agreement.measures import CORRELATIONS, MEASURES, Agreement


def agreement_figure(agreement: Agreement, k: int | None = None, title: str | None = None) -> go.Figure:
    """Correlations on a diverging scale from -1 to 1; the shares of Krishna et al.'s measures from 0 to 1.
    ``title``: in place of the one naming the measure and the ranking (a dataset run's "Mean ... over the examples")."""
    labels = list(agreement.labels)
    values = np.round(agreement.matrix, 3).astype(object)
    values[np.isnan(agreement.matrix)] = None  # undefined (constant scores): "n/a" in the cell
    text = [["n/a" if v is None else f"{v:.2f}" for v in row] for row in values]
    correlation = agreement.measure in CORRELATIONS
    name = MEASURES[agreement.measure][0].replace("@k", f"@{k}" if k else "@k")
    figure = go.Figure(go.Heatmap(
        z=values.tolist(), x=labels, y=labels, zmin=-1 if correlation else 0, zmax=1,
        colorscale="RdBu" if correlation else "Blues", text=text,
        texttemplate="%{text}", hovertemplate="%{y} vs %{x}: %{z}<extra></extra>",
        colorbar=dict(title=name)))
    size = 40 + 34 * len(labels)
    ranked = "|score|" if agreement.absolute else "signed scores"
    figure.update_layout(height=max(320, size + 120), margin=dict(l=10, r=10, t=30, b=10),
                         title=dict(text=title or f"{name} between methods' word scores ({ranked}"
                                                  f"{', signs of the raw scores' if 'sign' in agreement.measure else ''})",
                                    font=dict(size=13)),
                         yaxis=dict(autorange="reversed"), xaxis=dict(tickangle=-40))
    return figure
