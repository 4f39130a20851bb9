"""ROAR and Recursive ROAR side by side (paper 001 Figs. 4-6): each measure's mean performance after retraining
against the share (or number) of words masked, with its 95 % CI over seeds and the 100 %-masked floor.
Numbers come from ``evaluation/roar/scores.py``; this function only draws them."""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evaluation.roar import scores as roar_scores
from explainers import label_for
from ui.figures.common import band_trace, rgba

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
RANDOM_COLOUR = "#7f7f7f"
MODE_TITLES = {"roar": "ROAR (importance from the original model)",
               "recursive": "Recursive ROAR (importance recomputed each step)"}


def curve_figure(curves: pd.DataFrame, metric: str, floor: float | None, labels: dict[str, str] | None = None,
                 bands: list[str] | None = None, in_words: bool = False) -> go.Figure:
    """Mean curves (named by ``labels``) with the 95 % CI ribbons of the measures in ``bands`` (all when None),
    ROAR and Recursive ROAR side by side, the 100 %-masked floor dashed; ``in_words``: the x values are numbers of
    words (the 'tokens' count rule), not percentages."""
    unit = " words" if in_words else " %"
    labels = labels or {}
    modes = [m for m in ("roar", "recursive") if (curves["mode"] == m).any()]
    figure = make_subplots(rows=1, cols=len(modes), shared_yaxes=True, subplot_titles=[MODE_TITLES[m] for m in modes],
                           horizontal_spacing=0.06)
    measures = list(dict.fromkeys(curves["measure"]))
    colours = {m: (RANDOM_COLOUR if m == "random" else COLOURS[i % len(COLOURS)]) for i, m in enumerate(measures)}
    for col, mode in enumerate(modes, start=1):
        for measure in measures:
            data = curves[(curves["mode"] == mode) & (curves["measure"] == measure)].sort_values("ratio")
            if data.empty:
                continue
            colour = colours[measure]
            name = labels.get(measure) or label_for(measure)
            if bands is None or measure in bands:
                figure.add_trace(band_trace(data["ratio"], data["low"], data["high"], rgba(colour, 0.15),
                                            f"{name} 95 % CI", measure), row=1, col=col)
            figure.add_trace(go.Scatter(
                x=list(data["ratio"]), y=list(data["mean"]), mode="lines+markers", name=name, legendgroup=measure,
                showlegend=col == 1, line=dict(color=colour, dash="dash" if measure == "random" else "solid"),
                customdata=list(zip(data["low"], data["high"], data["n"])),
                hovertemplate=f"{html.escape(name)}<br>%{{x:g}}{unit} masked<br>{metric} %{{y:.3f}} "
                              f"[%{{customdata[0]:.3f}}, %{{customdata[1]:.3f}}], %{{customdata[2]}} seeds<extra></extra>"),
                row=1, col=col)
        if floor is not None:
            figure.add_hline(y=floor, line=dict(color="black", dash="dot", width=1), row=1, col=col,
                             annotation_text="100 % masked" if col == 1 else None)
        figure.update_xaxes(title_text="words masked" if in_words else "% of words masked", row=1, col=col)
    figure.update_yaxes(title_text=roar_scores.METRICS[metric], row=1, col=1)
    figure.update_layout(height=420, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.2))
    return figure
