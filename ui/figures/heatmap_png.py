"""Heatmaps as a PNG image (matplotlib, no browser): one row per method, the same colours as the HTML rows.

Words are drawn in boxes whose width follows the word length; long inputs wrap into blocks of words, each
block showing every method, in the palette picked on the page (red-blue or the colour-blind-safe blue-orange),
each row scaled by its own largest |score| (as on the page). The image carries the prediction under the title
and both colour scales under the rows, so it reads on its own.

No pyplot and no backend switch (a notebook's own): the figure is a ``matplotlib.figure.Figure`` on its own Agg canvas,
so importing this module leaves a notebook's plotting backend and pyplot's figure list alone.
"""
from __future__ import annotations

import io

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ui.figures.heatmap_html import SIGNED_SCALE, UNSIGNED_SCALE, Palette, active_palette

CHAR = 0.11  # inches per character at font size 9
ROW = 0.32  # inches per method row
LABEL_CHARS = 26
LEGEND_ROW = 0.3  # inches per colour scale under the rows
LEGEND_WIDTH = 6.4  # inches the two scale lines need
BAR = 1.6  # inches of one colour bar


def cell_colour(value: float, scale: float, signed: bool,
                palette: str | Palette | None = None) -> tuple[float, float, float, float]:
    """The cell's colour in ``palette`` (None: the one picked in this session, as on the page)."""
    if scale <= 0 or not np.isfinite(value) or value == 0:
        return (1.0, 1.0, 1.0, 0.0)
    strength = float(min(1.0, abs(value) / scale))
    colours = active_palette(palette)
    rgb = (colours.positive if value >= 0 else colours.negative) if signed else colours.unsigned
    return (rgb[0] / 255, rgb[1] / 255, rgb[2] / 255, 0.08 + 0.72 * strength)


def _short(word: str, limit: int = 16) -> str:
    return word if len(word) <= limit else word[: limit - 1] + "…"


def _legend(axis, top: float) -> None:
    """Both colour scales, one per line, drawn with the cells' own colours."""
    steps = np.linspace(-1, 1, 41)
    for line, ((name, low, middle, high), signed) in enumerate(((SIGNED_SCALE, True), (UNSIGNED_SCALE, False))):
        y = top + line * LEGEND_ROW
        axis.text(0.1, y + LEGEND_ROW / 2, f"{name}:", fontsize=8, va="center", color="#333", parse_math=False)
        axis.text(1.55, y + LEGEND_ROW / 2, low, fontsize=8, va="center", color="#333", parse_math=False)
        x0 = 2.95
        values = steps if signed else (steps + 1) / 2
        width = BAR / len(values)
        for index, value in enumerate(values):
            axis.add_patch(Rectangle((x0 + index * width, y + 0.06), width, LEGEND_ROW - 0.12,
                                     facecolor=cell_colour(float(value), 1.0, signed), lw=0))
        axis.add_patch(Rectangle((x0, y + 0.06), BAR, LEGEND_ROW - 0.12, fill=False, edgecolor=(0, 0, 0, 0.3),
                                 lw=0.5))
        note = f"   (white = {middle}; each row scaled to its own largest |score|)" if middle else ""
        axis.text(x0 + BAR + 0.1, y + LEGEND_ROW / 2, high + note, fontsize=8, va="center", color="#333",
                  parse_math=False)


def heatmap_figure(explanations, normalization: str = "none", absolute: bool = False, title: str = "",
                   prediction: str = "", words_per_block: int = 24, dpi: int = 110) -> Figure:
    """The matplotlib figure of the word-level heatmaps: title, prediction, one row per method, colour scales."""
    explanations = list(explanations)
    if not explanations:
        raise ValueError("Nothing to draw: no explanation was computed.")
    words = [_short(w) for w in explanations[0].words]
    segments = list(explanations[0].word_segment)
    widths = np.array([max(3, len(w)) + 1.5 for w in words]) * CHAR
    blocks = [list(range(i, min(i + words_per_block, len(words)))) for i in range(0, len(words), words_per_block)]
    rows = [(e.method_label, e.scores("word", normalization, absolute),
             e.signed and not absolute and normalization != "abs-sum") for e in explanations]
    label_width = LABEL_CHARS * CHAR
    width = max(label_width + max(widths[b].sum() for b in blocks) + 0.3, LEGEND_WIDTH)
    block_height = (len(rows) + 0.8) * ROW
    header = (0.45 if title else 0.15) + (0.3 if prediction else 0.0)
    height = header + len(blocks) * block_height + 2 * LEGEND_ROW + 0.1
    figure = Figure(figsize=(width, height), dpi=dpi)
    FigureCanvasAgg(figure)  # its own canvas: savefig and a notebook's display work without pyplot
    axis = figure.add_axes((0, 0, 1, 1))
    axis.set_xlim(0, width)
    axis.set_ylim(height, 0)
    axis.axis("off")
    if title:
        axis.text(0.1, 0.25, title, fontsize=10, fontweight="bold", va="center", parse_math=False)
    if prediction:
        axis.text(0.1, header - 0.2, prediction, fontsize=9, va="center", color="#222", parse_math=False)
    top = header
    for block_index, block in enumerate(blocks):
        y0 = top + block_index * block_height
        for row_index, (label, scores, signed) in enumerate(rows):
            y = y0 + row_index * ROW
            axis.text(0.1, y + ROW / 2, _short(label, LABEL_CHARS - 2), fontsize=8, va="center", color="#333",
                      parse_math=False)
            finite = np.abs(scores[np.isfinite(scores)])
            scale = float(finite.max()) if finite.size else 0.0
            x = label_width
            for word_index in block:
                if word_index > block[0] and segments[word_index] != segments[word_index - 1]:
                    axis.plot([x - 0.03, x - 0.03], [y + 0.03, y + ROW - 0.03], color="#888", lw=1.5)
                value = float(scores[word_index])
                colour = cell_colour(value, scale, signed)
                axis.add_patch(Rectangle((x + 0.01, y + 0.03), widths[word_index] - 0.02, ROW - 0.06,
                                         facecolor=colour, edgecolor=(0, 0, 0, 0.08), lw=0.5))
                dark = scale > 0 and abs(value) / scale > 0.65
                axis.text(x + widths[word_index] / 2, y + ROW / 2, words[word_index], fontsize=9, ha="center",
                          va="center", color="white" if dark else "#111", parse_math=False)
                x += widths[word_index]
    _legend(axis, top + len(blocks) * block_height)
    return figure


def heatmap_png(explanations, normalization: str = "none", absolute: bool = False, title: str = "",
                prediction: str = "", words_per_block: int = 24, dpi: int = 110) -> bytes:
    """PNG bytes of the word-level heatmaps of several explanations of the same input."""
    figure = heatmap_figure(explanations, normalization, absolute, title, prediction, words_per_block, dpi)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()
