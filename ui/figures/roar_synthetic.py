"""Paper 001 Fig. 3 redrawn from our numbers: test accuracy after k features removed for the ground truth, ROAR,
Recursive ROAR and the worst case (numbers from evaluation/roar/synthetic.py)."""
from __future__ import annotations

import plotly.graph_objects as go

STYLES = {"ground-truth": ("#2ca02c", "solid"), "roar": ("#d62728", "solid"), "recursive": ("#1f77b4", "dash"),
          "worst-case": ("#7f7f7f", "dot")}


def synthetic_figure(study: dict, labels: dict[str, str]) -> go.Figure:
    """One line per strategy: the mean accuracy over the drawn problems against the number of features removed."""
    figure = go.Figure()
    for strategy, curve in study["curves"].items():
        colour, dash = STYLES.get(strategy, ("#9467bd", "solid"))
        figure.add_trace(go.Scatter(x=list(range(len(curve))), y=curve, mode="lines+markers",
                                    name=labels.get(strategy, strategy), line=dict(color=colour, dash=dash),
                                    hovertemplate="%{x} features removed<br>accuracy %{y:.3f}<extra></extra>"))
    figure.update_layout(height=380, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=-0.25),
                         xaxis=dict(title="features removed (one per step)", dtick=1),
                         yaxis=dict(title=f"test accuracy (mean over {len(study['seeds'])} problems)"))
    return figure
