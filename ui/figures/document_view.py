"""A long document's heatmap, readable: a strip over the whole document that locates the strong
words, then the sentences folded, the top sentences open.

- The strip: the document cut into at most ``STRIP_CELLS`` equal runs of words, each cell coloured by its
  strongest word (largest |score|, sign kept), so a strong word shows where it is in 1,000.
- Sentences (``models.granularity.sentence_groups``, the rule the sentence-level methods use): each one a
  ``<details>`` whose summary gives its place, its strongest word and the sum of its scores; the ``TOP_OPEN``
  sentences holding the strongest words are open. One colour scale for the whole document (its largest |score|).
Every word is escaped.
"""
from __future__ import annotations

import html

import numpy as np

from models.granularity import sentence_groups
from ui.figures.heatmap_html import Palette, colour, text_colour

STRIP_CELLS = 200
TOP_OPEN = 3
LONG_WORDS = 120  # a row longer than this is drawn as a document


def is_long(words) -> bool:
    return len(words) > LONG_WORDS


def strip_html(scores: np.ndarray, signed: bool, scale: float, palette: str | Palette | None = None) -> str:
    n = len(scores)
    cells = min(STRIP_CELLS, n)
    edges = np.linspace(0, n, cells + 1).astype(int)
    parts = []
    for a, b in zip(edges[:-1], edges[1:]):
        chunk = scores[a:max(b, a + 1)]
        value = float(chunk[np.argmax(np.abs(chunk))])
        parts.append(f'<span title="words {a + 1}-{max(b, a + 1)}: strongest {value:+.3g}" style="flex:1;height:14px;'
                     f'background:{colour(value, scale, signed, palette)}"></span>')
    return ('<div class="xw-strip" style="display:flex;border:1px solid rgba(0,0,0,0.2);border-radius:3px;'
            f'margin:2px 0 6px 0">{"".join(parts)}</div>')


def document_html(words, scores, signed: bool, human: list[int] | None = None,
                  palette: str | Palette | None = None) -> str:
    words = list(words)
    scores = np.asarray(scores, dtype=np.float64)
    finite = np.abs(scores[np.isfinite(scores)])
    scale = float(finite.max()) if finite.size else 0.0
    groups, notes = sentence_groups(words)
    strength = [float(np.max(np.abs(scores[g.start:g.stop]))) if len(g) else 0.0 for g in groups]
    top = set(np.argsort(strength)[::-1][:TOP_OPEN].tolist())
    parts = [f'<div class="xw-legend">{len(words)} words, {len(groups)} sentences. The strip covers the whole '
             f'document (each cell: its strongest word); the {min(TOP_OPEN, len(groups))} sentences with the '
             f'strongest words are open.' + "".join(f" {html.escape(n)}" for n in notes) + "</div>",
             strip_html(scores, signed, scale, palette)]
    for index, group in enumerate(groups):
        chunk = scores[group.start:group.stop]
        strongest = group.start + int(np.argmax(np.abs(chunk)))
        spans = []
        for i in group:
            style = f"background:{colour(scores[i], scale, signed, palette)};color:{text_colour(scores[i], scale)}"
            underline = " xw-human" if human is not None and human[i] else ""
            spans.append(f'<span class="xw-tok{underline}" style="{style}" title="{html.escape(words[i])}: '
                         f'{scores[i]:+.3g}">{html.escape(words[i])}</span>')
        summary = (f"sentence {index + 1} (words {group.start + 1}-{group.stop}) · strongest "
                   f"<b>{html.escape(words[strongest])}</b> {scores[strongest]:+.3g} · sum {chunk.sum():+.3g}")
        parts.append(f'<details{" open" if index in top else ""}><summary style="font-size:13px;color:#444">'
                     f'{summary}</summary><div class="xw-row">{" ".join(spans)}</div></details>')
    return "".join(parts)
