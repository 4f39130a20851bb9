"""The confusion matrix of the error-analysis page (gold rows, predicted columns; counts computed elsewhere)."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def confusion_figure(matrix: np.ndarray, labels: list[str]) -> go.Figure:
    totals = matrix.sum(axis=1, keepdims=True)
    shares = np.divide(matrix, totals, out=np.zeros(matrix.shape), where=totals > 0)
    text = [[f"{matrix[g, p]}<br>{shares[g, p]:.0%}" for p in range(len(labels))] for g in range(len(labels))]
    figure = go.Figure(go.Heatmap(z=shares, x=[f"predicted {label}" for label in labels],
                                  y=[f"gold {label}" for label in labels], text=text, texttemplate="%{text}",
                                  colorscale="Blues", zmin=0, zmax=1, showscale=False,
                                  hovertemplate="%{y} → %{x}: %{text}<extra></extra>"))
    figure.update_layout(height=80 + 60 * len(labels), margin=dict(l=10, r=10, t=10, b=10),
                         yaxis=dict(autorange="reversed"))
    return figure
