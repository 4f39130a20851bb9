"""Paper 003's attack over a dataset: each attacked method's mean change per measure with its 95 % bootstrap CI,
as grouped bars (numbers from ``evaluation/adversarial/dataset.py``)."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

BAR_MEASURES = ("rank_change", "top_k_sum_change", "probability_change")


def measure_bars(table: pd.DataFrame, measure_labels: dict[str, str], method_labels: dict[str, str]) -> go.Figure:
    """``table``: metric, method, mean, low, high (one row per pair); one bar group per method, one bar per measure
    of ``BAR_MEASURES``, named by ``measure_labels`` and ``method_labels``."""
    figure = go.Figure()
    for metric in BAR_MEASURES:
        part = table[table["metric"] == metric]
        figure.add_bar(name=measure_labels[metric], x=[method_labels[m] for m in part["method"]],
                       y=part["mean"], error_y={"type": "data", "symmetric": False,
                                                "array": part["high"] - part["mean"],
                                                "arrayminus": part["mean"] - part["low"]})
    figure.update_layout(barmode="group", height=380, yaxis_title="mean [95 % bootstrap CI]",
                         margin={"t": 30, "b": 10})
    return figure
