"""The Sanity page's curves over randomization stages: each method's similarity to the original explanation against
the random baseline (Adebayo et al. 2018; paper 003 s. 3.3), and the randomized model's accuracy stage by stage.
Numbers come from ``evaluation/sanity/``; these functions only draw them."""
from __future__ import annotations

import html

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from evaluation.sanity import one_input
from explainers import label_for
from ui.figures.common import band_trace, rgba

MEASURE_LABELS = {"spearman": "Spearman ρ (signed)", "spearman_abs": "Spearman ρ (absolute values)",
                  "top_k": "top-k overlap"}
COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf"]
CHANCE_FILL = "rgba(120,120,120,0.15)"


def curve_figure(curves: pd.DataFrame, stage_names: list[str], measure: str, chance: dict | None = None,
                 title: str = "", bands: list[str] | None = None) -> go.Figure:
    """One line per method (by its label) over the stages; ``curves`` has stage_index, method, mean and optional
    low/high, shaded for the methods in ``bands`` (all when None). ``chance`` (mean/low/high) draws the random
    baseline as a dotted line with a band."""
    figure = go.Figure()
    x = list(range(len(stage_names)))
    if chance is not None and np.isfinite(chance.get("mean", np.nan)):
        figure.add_trace(band_trace(x, [chance["low"]] * len(x), [chance["high"]] * len(x), CHANCE_FILL,
                                    f"{one_input.CHANCE}, 95 % range", legend=True))
        figure.add_trace(go.Scatter(x=x, y=[chance["mean"]] * len(x), mode="lines", name=one_input.CHANCE,
                                    line={"dash": "dot", "color": "#555"}))
    for i, (method, group) in enumerate(curves.groupby("method", sort=False)):
        group = group.sort_values("stage_index")
        colour = COLOURS[i % len(COLOURS)]
        label = label_for(str(method))
        if {"low", "high"} <= set(group.columns) and group["low"].notna().any() and (bands is None or method in bands):
            figure.add_trace(band_trace(group["stage_index"], group["low"], group["high"], rgba(colour, 0.15),
                                        f"{label} CI", str(method)))
        figure.add_trace(go.Scatter(x=group["stage_index"], y=group["mean"], mode="lines+markers", name=label,
                                    line={"color": colour}, legendgroup=str(method),
                                    hovertemplate=f"{html.escape(label)}<br>%{{text}}<br>{measure} "
                                                  f"%{{y:.3f}}<extra></extra>",
                                    text=[stage_names[int(s)] for s in group["stage_index"]]))
    low = -1.05 if measure.startswith("spearman") else -0.02
    figure.update_layout(height=380, margin=dict(l=10, r=10, t=40 if title else 10, b=10), title=title or None,
                         xaxis=dict(tickmode="array", tickvals=x, ticktext=stage_names, title="randomization stage"),
                         yaxis=dict(range=[low, 1.05], title=MEASURE_LABELS.get(measure, measure)),
                         legend_title="method")
    return figure


def accuracy_figure(accuracy: pd.DataFrame, stage_names: list[str], majority: float | None,
                    num_labels: int) -> go.Figure:
    """The randomized model's accuracy per stage with its CI, beside the majority class and uniform chance."""
    figure = go.Figure()
    x = list(accuracy["stage_index"])
    figure.add_trace(band_trace(x, accuracy["low"], accuracy["high"], "rgba(33,102,172,0.15)", "accuracy 95 % CI"))
    figure.add_trace(go.Scatter(x=x, y=accuracy["mean"], mode="lines+markers", name="accuracy",
                                line={"color": "#2166ac"}, hovertemplate="%{y:.1%}<extra></extra>"))
    if majority is not None:
        figure.add_hline(y=majority, line_dash="dot", annotation_text=f"majority class {majority:.0%}")
    uniform = 1 / max(1, num_labels)
    figure.add_hline(y=uniform, line_dash="dash", line_color="#999", annotation_text=f"uniform chance {uniform:.0%}",
                     annotation_position="bottom right")
    figure.update_layout(height=300, margin=dict(l=10, r=10, t=10, b=10), yaxis=dict(range=[0, 1.02],
                         title="accuracy", tickformat=".0%"),
                         xaxis=dict(tickmode="array", tickvals=list(range(len(stage_names))), ticktext=stage_names,
                                    title="randomization stage"))
    return figure
