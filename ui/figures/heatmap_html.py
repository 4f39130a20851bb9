"""Token heatmaps as HTML. Every word or token from users and datasets is escaped here.

Signed scores use a diverging scale centred on zero (blue supports the target class, red speaks
against it); unsigned scores use a sequential purple scale. Each row is coloured relative to its own
largest |score| so every method uses its full colour range; the numbers in the tooltips are the
scores as normalized for display.

Palettes: ``red-blue`` (the default above) and ``blue-orange``, built from the Okabe-Ito colour-universal-design
set (blue #0072B2 for, vermillion #D55E00 against, reddish purple #CC79A7 unsigned) so readers with any common
colour-vision deficiency can tell the two sides apart. The reader picks one in the sidebar (``palette_picker``);
every function here that takes ``palette=None`` draws with the one picked in this session (the default outside
a page run: exports from the command line, tests, the Python library).

No Streamlit here (the library's figures must not import it); ``ui/widgets/heatmap.py`` adds the
sidebar's palette picker and registers the session's choice with ``set_palette_source``.
"""
from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

POSITIVE = (33, 102, 172)  # blue
NEGATIVE = (178, 24, 43)  # red
UNSIGNED = (106, 61, 154)  # purple


@dataclass(frozen=True)
class Palette:
    name: str
    label: str
    positive: tuple[int, int, int]  # supports the target class
    negative: tuple[int, int, int]  # speaks against it
    unsigned: tuple[int, int, int]  # importance without a sign


PALETTES = {p.name: p for p in [
    Palette("red-blue", "red-blue", POSITIVE, NEGATIVE, UNSIGNED),
    Palette("blue-orange", "blue-orange (colour-blind safe)", (0, 114, 178), (213, 94, 0), (204, 121, 167)),
]}
DEFAULT_PALETTE = "red-blue"
PALETTE_KEY = "palette"  # the sidebar widget's key; its value is kept under "keep:palette"


def _no_session_palette() -> str | None:
    return None


_palette_source: Callable[[], str | None] = _no_session_palette  # the app's session choice, set by ui/widgets/heatmap.py


def set_palette_source(source: Callable[[], str | None]) -> None:
    """Where ``palette=None`` reads the reader's choice (the app registers the session state; elsewhere none)."""
    global _palette_source
    _palette_source = source


def active_palette(palette: str | Palette | None = None) -> Palette:
    """``palette`` itself, by name, or (None) the one picked in this session; the default outside a page run."""
    if isinstance(palette, Palette):
        return palette
    if palette is None:
        palette = _palette_source()
    return PALETTES.get(palette or DEFAULT_PALETTE, PALETTES[DEFAULT_PALETTE])
SEPARATOR = '<span class="xw-sep" title="segment boundary ([SEP])">&#8214;</span>'

CSS = """
<style>
.xw-row{line-height:2.1;font-family:ui-sans-serif,system-ui,sans-serif;font-size:15px;margin:2px 0 4px 0}
.xw-tok{padding:2px 3px;margin:0 1px;border-radius:4px;white-space:pre-wrap;border:1px solid rgba(0,0,0,0.06)}
.xw-sep{color:#888;font-weight:700;margin:0 6px}
.xw-special{color:#888;font-size:12px}
.xw-human{text-decoration:underline;text-decoration-thickness:3px;text-decoration-color:#1b9e77}
.xw-legend{font-size:12px;color:#555;margin:2px 0 6px 0}
.xw-bar{display:inline-block;width:90px;height:10px;vertical-align:middle;border:1px solid rgba(0,0,0,0.15);
border-radius:2px}
.xw-mid{color:#888}
.xw-name{font-weight:600}
.xw-prediction{font-size:14px;margin:4px 0 8px 0}
</style>
"""


def colour(value: float, scale: float, signed: bool, palette: str | Palette | None = None) -> str:
    """rgba background for one score; alpha grows with |value| / scale."""
    if scale <= 0 or not np.isfinite(value):
        return "rgba(0,0,0,0)"
    strength = float(min(1.0, abs(value) / scale))
    chosen = active_palette(palette)
    rgb = (chosen.positive if value >= 0 else chosen.negative) if signed else chosen.unsigned
    return f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{0.08 + 0.72 * strength:.3f})" if strength > 0 else "rgba(0,0,0,0)"


def text_colour(value: float, scale: float) -> str:
    return "#fff" if scale > 0 and abs(value) / scale > 0.65 else "#111"


def heatmap_html(units: list[str], scores: np.ndarray, signed: bool, segments: list[int] | None = None,
                 special: list[bool] | None = None, human: list[int] | None = None, decimals: int = 3,
                 palette: str | Palette | None = None) -> str:
    """One heatmap row. ``units`` are words or tokens; ``segments`` (0/1) draws the pair boundary;
    ``special`` greys out [CLS]/[SEP]; ``human`` underlines the words people marked."""
    scores = np.asarray(scores, dtype=np.float64)
    palette = active_palette(palette)
    finite = np.abs(scores[np.isfinite(scores)])
    scale = float(finite.max()) if finite.size else 0.0
    parts = []
    for i, (unit, value) in enumerate(zip(units, scores)):
        if segments is not None and i > 0 and segments[i] != segments[i - 1] and segments[i] >= 0 and segments[i - 1] >= 0:
            parts.append(SEPARATOR)
        if special is not None and special[i]:
            parts.append(f'<span class="xw-tok xw-special">{html.escape(unit)}</span>')
            continue
        classes = "xw-tok xw-human" if human is not None and human[i] else "xw-tok"
        parts.append(f'<span class="{classes}" style="background:{colour(value, scale, signed, palette)};'
                     f'color:{text_colour(value, scale)}" title="{html.escape(unit)}: {value:+.{decimals}g}">'
                     f"{html.escape(unit)}</span>")
    return f'<div class="xw-row">{" ".join(parts)}</div>'


def _rgba(rgb: tuple[int, int, int], alpha: float) -> str:
    return f"rgba({rgb[0]},{rgb[1]},{rgb[2]},{alpha})"


SIGNED_SCALE = ("signed methods", "against the target", "0", "for the target")
UNSIGNED_SCALE = ("unsigned methods", "0", "", "most important")


def legend_html(signed: bool = True, unsigned: bool = True, palette: str | Palette | None = None) -> str:
    """The colour scales of the rows shown: signed (red against / blue for the target class) and unsigned
    (purple importance), in the palette in use; each row uses the full scale for its own largest |score|."""
    chosen = active_palette(palette)
    scales = []
    if signed:
        gradient = f"{_rgba(chosen.negative, 0.8)},rgba(255,255,255,0),{_rgba(chosen.positive, 0.8)}"
        scales.append((SIGNED_SCALE, gradient))
    if unsigned or not scales:
        scales.append((UNSIGNED_SCALE, f"rgba(255,255,255,0),{_rgba(chosen.unsigned, 0.8)}"))
    parts = []
    for (name, low, middle, high), gradient in scales:
        parts.append(f'<span class="xw-scale"><span class="xw-name">{name}</span> {low} <span class="xw-bar" '
                     f'style="background:linear-gradient(to right,{gradient})"></span> {high}'
                     + (f' <span class="xw-mid">(white = {middle})</span>' if middle else "") + "</span>")
    return ('<div class="xw-legend">Colour: ' + " &nbsp;·&nbsp; ".join(parts)
            + " &nbsp;·&nbsp; each row scaled to its own largest |score|</div>")


def explanation_row_html(explanation, level: str = "word", normalization: str = "none", absolute: bool = False,
                         human: list[int] | None = None, palette: str | Palette | None = None) -> str:
    """The heatmap of one Explanation at word or sub-word level."""
    scores = explanation.scores(level, normalization, absolute)
    signed = explanation.signed and not absolute and normalization != "abs-sum"
    if level == "word":
        return heatmap_html(list(explanation.words), scores, signed, segments=list(explanation.word_segment),
                            human=human, palette=palette)
    segments = [explanation.word_segment[w] if w >= 0 else -1 for w in explanation.token_word]
    special = [w < 0 for w in explanation.token_word]
    return heatmap_html(list(explanation.tokens), scores, signed, segments=segments, special=special,
                        palette=palette)


def html_document(title: str, body: str) -> str:
    """A self-contained HTML file (inline CSS, no scripts) for export."""
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>{CSS}"
            f"<style>body{{font-family:system-ui,sans-serif;margin:24px;max-width:1100px}}"
            f"h2{{font-size:15px;margin:16px 0 2px 0}} .meta{{font-size:12px;color:#666}}</style></head>"
            f"<body>{body}</body></html>")


def badge_of(explanation) -> str | None:
    """The badge of an explanation selected on a metric (AML: "tuned for <metric>"), from its provenance."""
    details = explanation.provenance.get("details")
    badge = details.get("badge") if isinstance(details, dict) else None
    return badge if isinstance(badge, str) and badge else None


def provenance_line(explanation, normalization: str = "none") -> str:
    """target, baseline, operator, sign, normalization, seed, preset and cost of one explanation (plain text)."""
    p = explanation.provenance
    parts = [f"target: {p['target']['label']} ({p['target']['how']})", f"baseline: {p['baseline']}"]
    if p["target"].get("contrast"):  # a contrastive target: the score of the target minus that of this class
        parts.insert(1, f"rather than: {p['target']['contrast']['label']}")
    badge = badge_of(explanation)
    if badge:
        parts.insert(0, badge)
    if p.get("removal_operator"):
        parts.append(f"operator: {p['removal_operator']}")
    parts.append(p["sign"].split(":")[0])
    parts.append(f"normalization: {normalization}")
    if p.get("preset"):
        parts.append(f"preset: {p['preset']}")
    if p.get("seed") is not None:
        parts.append(f"seed: {p['seed']}")
    parts.append(f"{p['seconds']:.2f} s, {p['forward_passes']} fwd / {p['backward_passes']} bwd passes")
    return " · ".join(parts)


def export_html(explanations, level: str = "word", normalization: str = "none", absolute: bool = False,
                title: str = "Explanations", header: str = "", prediction: str = "") -> str:
    """Every heatmap row with its provenance, as one self-contained HTML file (inline CSS, no scripts): the
    prediction and both colour scales above the rows, so the file reads on its own."""
    rows = []
    for e in explanations:
        rows.append(f"<h2>{html.escape(e.method_label)}</h2><div class='meta'>"
                    f"{html.escape(provenance_line(e, normalization))}</div>"
                    + explanation_row_html(e, level, normalization, absolute))
        rows.extend(f"<div class='meta'>&#9888; {html.escape(w)}</div>" for w in e.warnings)
    shown = f"<div class='xw-prediction'>{html.escape(prediction)}</div>" if prediction else ""
    body = (f"<h1 style='font-size:20px'>{html.escape(title)}</h1>{shown}"
            f"<div class='meta'>{html.escape(header)}</div>" + legend_html(signed=True, unsigned=True)
            + "".join(rows))
    return html_document(title, body)
