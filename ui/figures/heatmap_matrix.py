"""The compact matrix view of several heatmaps: methods as rows, words as columns, one colour scale and one legend,
sized for a slide and exported as PNG or SVG from plotly's toolbar (``export_config``).

Each row is divided by its own largest |score| (as the HTML rows are), so every method spans the one scale:
-1..1 on the diverging scale when every row is signed, 0..1 of |score| on a sequential scale otherwise (a method
without a sign cannot say "against"). The raw scores are in the hover text.
"""
from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from explainers import Explanation
from ui.figures.heatmap_html import Palette, active_palette

SLIDE_WIDTH = 1280  # 16:9 at 720 p: the figure fits one slide
SLIDE_HEIGHT = 720
ROW_HEIGHT = 34
EXPORT_FORMATS = ("png", "svg")


def _rgb(colour: tuple[int, int, int]) -> str:
    return f"rgb({colour[0]},{colour[1]},{colour[2]})"


def colour_scale(palette: Palette, signed: bool) -> list[list]:
    """Plotly colour scale of ``palette``: negative-white-positive (signed) or white-unsigned."""
    if signed:
        return [[0.0, _rgb(palette.negative)], [0.5, "rgb(255,255,255)"], [1.0, _rgb(palette.positive)]]
    return [[0.0, "rgb(255,255,255)"], [1.0, _rgb(palette.unsigned)]]


def matrix_values(explanations: list[Explanation], level: str = "word", absolute: bool = False) -> tuple[np.ndarray, bool]:
    """(rows x units) scores, each row divided by its largest |score|, and whether the scale is signed."""
    signed = all(e.signed for e in explanations) and not absolute
    rows = []
    for e in explanations:
        values = np.asarray(e.scores(level, "none", absolute=not signed), dtype=np.float64)
        largest = np.max(np.abs(values[np.isfinite(values)]), initial=0.0)
        rows.append(values / largest if largest > 0 else np.zeros_like(values))
    return np.vstack(rows), signed


def units_of(explanation: Explanation, level: str) -> list[str]:
    return list(explanation.words if level == "word" else explanation.tokens)


def heatmap_matrix(explanations: list[Explanation], level: str = "word", absolute: bool = False,
                   palette: str | Palette | None = None, title: str = "") -> go.Figure:
    """One plotly heatmap of every explanation of one input (they must cover the same words)."""
    if not explanations:
        raise ValueError("no explanation to draw")
    units = units_of(explanations[0], level)
    if any(units_of(e, level) != units for e in explanations):
        raise ValueError("the explanations cover different inputs; a matrix needs one input")
    values, signed = matrix_values(explanations, level, absolute)
    chosen = active_palette(palette)
    rows = [html.escape(e.method_label) for e in explanations]  # plotly renders some HTML tags in labels
    words = [html.escape(u) for u in units]
    raw = np.vstack([np.asarray(e.scores(level, "none", absolute), dtype=np.float64) for e in explanations])
    hover = [[f"{rows[r]}<br>{words[c]}: {raw[r, c]:+.4g}" for c in range(len(units))] for r in range(len(rows))]
    figure = go.Figure(go.Heatmap(
        z=values, x=list(range(len(units))), y=rows, zmin=-1.0 if signed else 0.0, zmax=1.0,
        colorscale=colour_scale(chosen, signed), text=hover, hoverinfo="text", xgap=2, ygap=2,
        colorbar=dict(title=dict(text="score / row max" if signed else "|score| / row max", side="right"),
                      tickvals=[-1, 0, 1] if signed else [0, 1],
                      ticktext=["against", "0", "for the target"] if signed else ["0", "most important"],
                      thickness=14, len=0.9)))
    long = len(units) > 20
    figure.update_layout(
        title=dict(text=html.escape(title)) if title else None,
        width=SLIDE_WIDTH, height=min(SLIDE_HEIGHT, 120 + ROW_HEIGHT * len(rows) + (60 if long else 20)),
        margin=dict(l=10, r=10, t=40 if title else 10, b=10), plot_bgcolor="white",
        xaxis=dict(tickmode="array", tickvals=list(range(len(units))), ticktext=words, side="top",
                   tickangle=-45 if long else 0, showgrid=False),
        yaxis=dict(autorange="reversed", showgrid=False))
    return figure


def export_config(image_format: str = "png", filename: str = "heatmap-matrix") -> dict:
    """Plotly's toolbar with its camera button saving ``image_format`` (png or svg) at slide size."""
    if image_format not in EXPORT_FORMATS:
        raise ValueError(f"image format must be one of {', '.join(EXPORT_FORMATS)}")
    return {"displaylogo": False, "toImageButtonOptions": {"format": image_format, "filename": filename,
                                                           "width": SLIDE_WIDTH, "scale": 2 if image_format == "png" else 1}}
