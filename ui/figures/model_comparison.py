"""Figures of the dataset-level model comparison, as paper 003 draws them (its Figs. 4.1-4.7 in s. 4.1 and
4.12-4.18 in s. 4.2): a metric against model size
with 95 % bands, grouped bars per architecture with black whiskers, and the randomization curves one panel per
model. They draw the rows of ``evaluation.suite.model_comparison_dataset``, nothing more."""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from evaluation.suite.model_comparison_dataset import ENCODER, METRIC_LABELS
from explainers import label_for
from ui.figures.common import band_trace, rgba
from ui.figures.faithfulness import PALETTE

RANDOM_FILL = "rgba(120,120,120,0.22)"


def _metric_rows(rows: pd.DataFrame, metric: str) -> pd.DataFrame:
    part = rows[(rows["metric"] == metric) & rows["mean"].notna()]
    return part.astype({"mean": float, "low": float, "high": float})


def _colours(methods) -> dict:
    return {method: PALETTE[i % len(PALETTE)] for i, method in enumerate(methods)}


def size_lines(rows: pd.DataFrame, metric: str, architecture: str = ENCODER) -> go.Figure:
    """x = parameters (millions), y = the metric; one line per method with its shaded 95 % CI, and the random
    reference's band (grey) where the metric has one. Only models of one architecture: size is the axis here."""
    part = _metric_rows(rows[rows["architecture"] == architecture], metric).copy()
    part["millions"] = part["parameters"].astype(float) / 1e6
    figure = go.Figure()
    reference = part.dropna(subset=["reference_low", "reference_high"]).groupby("millions")[
        ["reference_low", "reference_high"]].mean().sort_index()
    if len(reference):
        figure.add_trace(band_trace(reference.index, reference["reference_low"], reference["reference_high"],
                                    RANDOM_FILL, "random (95 % band)", "random", legend=True))
    colours = _colours(part["method"].unique())
    for method, group in part.groupby("method", sort=False):
        group = group.sort_values("millions")
        colour = colours[method]
        figure.add_trace(band_trace(group["millions"], group["low"], group["high"], rgba(colour, 0.18),
                                    f"{label_for(method)} 95 % CI", method))
        figure.add_trace(go.Scatter(x=group["millions"], y=group["mean"], mode="lines+markers",
                                    name=label_for(method), legendgroup=method, line=dict(color=colour),
                                    customdata=group[["model", "blocks"]].to_numpy(),
                                    hovertemplate="%{customdata[0]} (%{customdata[1]} blocks, %{x:.1f} M): "
                                                  "%{y:.3f}<extra>" + html.escape(label_for(method)) + "</extra>"))
    figure.update_layout(title=f"{METRIC_LABELS.get(metric, metric)} vs model size ({architecture} models)",
                         height=420, margin=dict(l=10, r=10, t=50, b=10),
                         xaxis=dict(title="parameters (millions)"), yaxis=dict(title=METRIC_LABELS.get(metric, metric)),
                         legend=dict(orientation="h", yanchor="top", y=-0.2))
    return figure


def architecture_bars(rows: pd.DataFrame, metric: str) -> go.Figure:
    """x = model (its architecture in the label), one bar per method, black whiskers for the 95 % CI; the random
    reference as a grey band per model where the metric has one."""
    part = _metric_rows(rows, metric)
    models = list(dict.fromkeys(part["model"]))
    names = {m: f"{m}<br>({part[part['model'] == m]['architecture'].iloc[0]})" for m in models}
    figure = go.Figure()
    colours = _colours(part["method"].unique())
    for method, group in part.groupby("method", sort=False):
        group = group.set_index("model").reindex(models)
        figure.add_trace(go.Bar(x=[names[m] for m in models], y=group["mean"], name=label_for(method),
                                marker_color=colours[method],
                                error_y=dict(type="data", array=group["high"] - group["mean"],
                                             arrayminus=group["mean"] - group["low"], color="black", thickness=1.2)))
    reference = part.dropna(subset=["reference_low", "reference_high"]).groupby("model")[
        ["reference_low", "reference_high"]].mean()
    for position, model in enumerate(models):
        if model in reference.index:
            figure.add_shape(type="rect", x0=position - 0.45, x1=position + 0.45, y0=reference.loc[model, "reference_low"],
                             y1=reference.loc[model, "reference_high"], fillcolor=RANDOM_FILL, line=dict(width=0),
                             layer="below")
    figure.update_layout(title=f"{METRIC_LABELS.get(metric, metric)} per model (grey: random band)",
                         barmode="group", height=420, margin=dict(l=10, r=10, t=50, b=10),
                         yaxis=dict(title=METRIC_LABELS.get(metric, metric)),
                         legend=dict(orientation="h", yanchor="top", y=-0.25))
    return figure


def randomization_panels(curves: pd.DataFrame) -> go.Figure:
    """One panel per model: Spearman rho with the original explanation as layers are randomized (original, head,
    last block ... first block, embeddings), one line per method, the chance band shaded."""
    models = list(dict.fromkeys(curves["model"]))
    figure = make_subplots(rows=1, cols=max(1, len(models)), shared_yaxes=True,
                           subplot_titles=[html.escape(m) for m in models])
    colours = _colours(curves["method"].unique())
    for column, model in enumerate(models, start=1):
        mine = curves[curves["model"] == model]
        stages = mine.drop_duplicates("stage_index").sort_values("stage_index")["stage"].tolist()
        chance = mine.dropna(subset=["chance_low", "chance_high"])
        if len(chance):
            figure.add_trace(band_trace(stages, [chance["chance_low"].iloc[0]] * len(stages),
                                        [chance["chance_high"].iloc[0]] * len(stages), RANDOM_FILL, "chance band",
                                        "chance", legend=column == 1), row=1, col=column)
        for method, group in mine.groupby("method", sort=False):
            group = group.sort_values("stage_index")
            figure.add_trace(go.Scatter(x=group["stage"], y=group["mean"], mode="lines+markers",
                                        name=label_for(method), legendgroup=method, showlegend=column == 1,
                                        line=dict(color=colours[method]),
                                        error_y=dict(type="data", array=group["high"] - group["mean"],
                                                     arrayminus=group["mean"] - group["low"], thickness=0.8)),
                             row=1, col=column)
    figure.update_yaxes(title_text="Spearman rho with the original", row=1, col=1)
    figure.update_layout(height=420, margin=dict(l=10, r=10, t=50, b=10), legend=dict(orientation="h", y=-0.3),
                         title="Cascading layer randomization, one panel per model")
    return figure


def metrics_in(rows: pd.DataFrame) -> list[str]:
    """The metrics that have a value, in the order of ``METRIC_LABELS``."""
    present = set(rows.loc[rows["mean"].notna(), "metric"]) if len(rows) else set()
    return [m for m in METRIC_LABELS if m in present]


def shown_table(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows as shown and exported: rounded values, the method's label."""
    table = rows.copy()
    table["method"] = [label_for(m) for m in table["method"]]
    return table.round({c: 4 for c in ("mean", "low", "high", "reference_low", "reference_high")}) \
        if len(table) else table

