"""Figures of the Faithfulness page: removal curves with the random band, dataset curves with confidence bands,
and the bias matrix as an escaped HTML table. They draw numbers computed in evaluation/, nothing more."""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from evaluation.faithfulness.presets import BY_ID
from explainers import label_for
from ui.figures.common import band_trace, rgba

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f")
SUMMARY_NAMES = {"aopc": "AOPC", "auc": "AUC", "mean": "mean", "point": "value", "flip": "flip at"}



def add_random_band(figure: go.Figure, x, random: dict, name: str) -> None:
    """The random baseline: its band (low-high, shaded) and its mean (dashed), one legend group."""
    figure.add_trace(band_trace(x, random["low"], random["high"], "rgba(120,120,120,0.22)", "random band", "random"))
    figure.add_trace(go.Scatter(x=x, y=random["mean"], mode="lines", line=dict(color="#555", dash="dash"), name=name,
                                legendgroup="random"))

def axis_titles(metric_id: str, value: str, dataset: bool = False) -> tuple[str, str]:
    metric = BY_ID[metric_id.split("[")[0]]
    if metric.schedule == "steps" and dataset:
        x = "fraction of the curve's steps (deletion: of the top 20 %)" if metric.max_fraction < 1 else \
            ("fraction of words inserted" if metric.mode == "keep" else "fraction of words removed")
    elif metric.mode == "keep":
        x = "fraction of words kept (the top of the ranking)"
    else:
        x = "fraction of words removed (the top of the ranking)"
    score = "log p(target)" if metric.score == "log-probability" else "p(target)"
    y = f"{score} after removal" if value == "score" else f"change: {score}(x) - {score}(x')"
    return x, y


def summary_name(metric_id: str) -> str:
    return SUMMARY_NAMES.get(BY_ID[metric_id.split("[")[0]].summary, "value")


def input_curve_figure(curve: dict, metric_label: str, value: str = "score") -> go.Figure:
    """One line per method (its label and summary in the legend), the random mean (dashed) and its 95 % band
    (a grey area without edge lines or markers)."""
    figure = go.Figure()
    x = curve.get("x") or []
    name = summary_name(curve["metric"])
    random = curve.get("random")
    if random is not None:
        add_random_band(figure, x, random, f"random baseline · {name} {random['summary']:.3f} (95 % band shaded)")
    for index, (method, ys) in enumerate(curve["methods"].items()):
        summary = curve["summary"].get(method)
        label = label_for(method)
        shown = f"{label} · {name} {summary:.3f}" if summary is not None and np.isfinite(summary) else label
        figure.add_trace(go.Scatter(x=x, y=ys, mode="lines+markers", name=shown,
                                    line=dict(color=PALETTE[index % len(PALETTE)]),
                                    hovertemplate="x %{x:.2f}: %{y:.4f}<extra>" + html.escape(label) + "</extra>"))
    x_title, y_title = axis_titles(curve["metric"], value)
    figure.update_layout(title=metric_label, height=420, margin=dict(l=10, r=10, t=50, b=10),
                         xaxis=dict(title=x_title), yaxis=dict(title=y_title),
                         legend=dict(orientation="h", yanchor="top", y=-0.2))
    return figure


def dataset_curve_figure(curves: dict, metric_label: str, value: str = "score",
                         bands: list[str] | None = None) -> go.Figure:
    """Mean curve per method; the bootstrap 95 % CI band of the methods in ``bands`` only (all when None: six
    overlapping bands hide each other); the random mean and its orderings' band."""
    figure = go.Figure()
    x = curves.get("x") or []
    random = curves.get("random")
    if random is not None:
        add_random_band(figure, x, random, f"random baseline ({random['orderings']} orderings, band shaded)")
    for index, (method, stats) in enumerate(curves["methods"].items()):
        colour = PALETTE[index % len(PALETTE)]
        label = label_for(method)
        shaded = bands is None or method in bands
        if shaded:
            figure.add_trace(band_trace(x, stats["low"], stats["high"], rgba(colour, 0.18), f"{label} 95 % CI",
                                        method))
        figure.add_trace(go.Scatter(x=x, y=stats["mean"], mode="lines+markers", line=dict(color=colour),
                                    name=f"{label} (n = {stats['n']}{', 95 % CI shaded' if shaded else ''})",
                                    legendgroup=method))
    x_title, y_title = axis_titles(curves["metric"], value, dataset=True)
    figure.update_layout(title=metric_label, height=440, margin=dict(l=10, r=10, t=50, b=10),
                         xaxis=dict(title=x_title), yaxis=dict(title=y_title),
                         legend=dict(orientation="h", yanchor="top", y=-0.2))
    return figure


def bias_matrix_html(matrix, operator_labels: dict[str, str], decimals: int = 3) -> str:
    """methods x operators (methods by their labels); shared cells (method and a shown metric remove words the same way) highlighted,
    their one-line reason as the tooltip; the value and rank of the operator sweep when there is one."""
    shared = matrix.shared
    ranks = matrix.ranks()
    head = "".join(f"<th style='padding:4px 8px'>{html.escape(operator_labels.get(op, op))}<br>"
                   f"<span style='font-weight:400;font-size:11px;color:#666'>"
                   f"{html.escape(', '.join(matrix.metrics_by_operator.get(op, [])) or 'no metric shown')}</span></th>"
                   for op in matrix.operators)
    rows = []
    for method in matrix.methods:
        own = matrix.method_operators.get(method)
        name = html.escape(label_for(method))
        cells = [f"<td style='padding:4px 8px;font-weight:600'>{name}<br><span style='font-weight:400;"
                 f"font-size:11px;color:#666'>removes with: "
                 f"{html.escape(operator_labels.get(own, own) if own else 'nothing (no removal)')}</span></td>"]
        for op in matrix.operators:
            text = ""
            if matrix.values is not None and method in matrix.values.index and op in matrix.values.columns:
                number = matrix.values.loc[method, op]
                if np.isfinite(number):
                    text = f"{number:.{decimals}f}"
                    if ranks is not None:
                        text += f" <span style='color:#666;font-size:11px'>(#{int(ranks.loc[method, op])})</span>"
            if bool(shared.loc[method, op]):
                reason = html.escape(matrix.reasons.get((method, op), ""), quote=True)
                cells.append(f"<td title=\"{reason}\" style='padding:4px 8px;background:#fdd49e;"
                             f"border:2px solid #e6550d'>{text or 'shared'} &#9888;</td>")
            else:
                style = "background:#f0f0f0;" if own == op else ""
                cells.append(f"<td style='padding:4px 8px;{style}'>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return ("<div style='overflow-x:auto'><table style='border-collapse:collapse;font-size:13px'><tr><th></th>"
            + head + "</tr>" + "".join(rows) + "</table></div>")  # a wide matrix scrolls instead of being cut
