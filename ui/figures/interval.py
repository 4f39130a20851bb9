"""Each method's mean with its 95 % CI as a point with error bars, read against the random band shaded behind it
(the Sanity page's eMPRT, repeatability and data-randomization measures over a dataset)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evaluation.metric import METRICS
from evaluation.sanity import one_input
from explainers import label_for
from ui.figures.common import band_trace
from ui.figures.sanity_curves import CHANCE_FILL


def interval_figure(rows: pd.DataFrame, band: dict | None, metric_id: str) -> go.Figure:
    """``rows``: method, mean, low, high; ``band``: the random band's mean, low and high (or None)."""
    metric = METRICS[metric_id]
    figure = go.Figure()
    labels = [label_for(m) for m in rows["method"]]
    if band is not None and np.isfinite(band["mean"]):
        x = [-0.5, len(labels) - 0.5]
        figure.add_trace(band_trace(x, [band["low"]] * 2, [band["high"]] * 2, CHANCE_FILL,
                                    f"{one_input.CHANCE}, 95 % range", legend=True))
        figure.add_trace(go.Scatter(x=x, y=[band["mean"]] * 2, mode="lines", name=one_input.CHANCE,
                                    line={"dash": "dot", "color": "#555"}))
    figure.add_trace(go.Scatter(x=list(range(len(labels))), y=rows["mean"], mode="markers", name=metric.label,
                                error_y={"type": "data", "symmetric": False,
                                         "array": (rows["high"] - rows["mean"]).tolist(),
                                         "arrayminus": (rows["mean"] - rows["low"]).tolist()}))
    figure.update_layout(height=320, margin=dict(l=10, r=10, t=10, b=10),
                         xaxis=dict(tickmode="array", tickvals=list(range(len(labels))), ticktext=labels),
                         yaxis=dict(title=f"{metric.label} {metric.arrow}"))
    return figure
