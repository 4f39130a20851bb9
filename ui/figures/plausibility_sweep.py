"""Paper 000's threshold sweep (plausibility, not faithfulness): each method's F1 (or IoU, precision, recall,
coverage) against the human rationale as the threshold tau moves, the random baseline dotted."""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from evaluation.metric import RANDOM_METHOD
from explainers import label_for


def sweep_figure(curves: pd.DataFrame, quantity: str = "f1") -> go.Figure:
    """``curves``: method, tau and one column per quantity."""
    figure = go.Figure()
    for method, group in curves.groupby("method", sort=False):
        dash = "dot" if method == RANDOM_METHOD else "solid"
        name = label_for(str(method))
        figure.add_trace(go.Scatter(x=group["tau"].tolist(), y=group[quantity].tolist(), mode="lines+markers",
                                    name=name, line={"dash": dash},
                                    hovertemplate=f"{html.escape(name)}<br>tau %{{x:.2f}}<br>{quantity} %{{y:.3f}}"
                                                  "<extra></extra>"))
    figure.update_layout(height=360, margin=dict(l=10, r=10, t=30, b=10), xaxis_title="threshold tau",
                         yaxis_title=quantity + (" (of the averaged P and R)" if quantity == "f1" else " (mean)"),
                         yaxis_range=[0, 1.02], legend_title="method",
                         title="Paper 000 threshold sweep (plausibility, not faithfulness)")
    return figure
