"""The Sanity page's degradation grid: one heatmap row per randomization stage, each row on its own colour scale,
so a reader sees where an explanation stops changing. Every word is escaped."""
from __future__ import annotations

import html

import numpy as np

from ui.figures.heatmap_html import colour, text_colour


def grid_html(stage_names: list[str], words: list[str], matrix: np.ndarray, signed: bool,
              similarity: list[float] | None = None) -> str:
    """``matrix``: stages x words (NaN: no score, drawn as a dot); ``similarity``: each stage's value beside its name."""
    head = "".join(f"<th style='font-weight:400;color:#666;padding:0 4px'>{html.escape(w)}</th>" for w in words)
    rows = []
    for r, stage in enumerate(stage_names):
        values = matrix[r]
        finite = np.abs(values[np.isfinite(values)])
        scale = float(finite.max()) if finite.size else 0.0
        cells = []
        for word, value in zip(words, values):
            if not np.isfinite(value):
                cells.append("<td style='color:#bbb;text-align:center'>·</td>")
                continue
            cells.append(f"<td title='{html.escape(word)}: {value:+.3g}' style='background:"
                         f"{colour(value, scale, signed)};color:{text_colour(value, scale)};padding:2px 4px;"
                         f"border-radius:3px;text-align:center'>{html.escape(word)}</td>")
        extra = "" if similarity is None or not np.isfinite(similarity[r]) else f" ({similarity[r]:+.2f})"
        rows.append(f"<tr><td style='white-space:nowrap;color:#444;padding-right:8px'>{html.escape(stage)}"
                    f"{extra}</td>{''.join(cells)}</tr>")
    return (f"<div style='overflow-x:auto'><table class='xw-grid' style='border-collapse:separate;border-spacing:2px;"
            f"font-size:13px'><tr><th></th>{head}</tr>{''.join(rows)}</table></div>")
