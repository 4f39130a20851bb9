"""The line above a heatmap row: the method's label, the badge of a method selected on a metric (AML: "tuned for
..."), and a grey note (cost or provenance). Markdown with inline HTML; every text from a method or a model's labels
is escaped."""
from __future__ import annotations

import html

from explainers import Explanation
from ui.figures.heatmap_html import badge_of

BADGE = "background:#efe7f7;color:#4b2a7a;border-radius:8px;padding:1px 7px;font-size:12px;font-weight:500"
NOTE = "color:#777;font-size:13px"


def row_title(explanation: Explanation) -> str:
    """The method's label, and its badge when it has one (HTML)."""
    badge = badge_of(explanation)
    return html.escape(explanation.method_label, quote=False) + (
        f" <span class='xw-badge' style='{BADGE}'>{html.escape(badge)}</span>" if badge else "")


def row_header(title_html: str, note: str) -> str:
    """``title_html`` in bold (already HTML, e.g. ``row_title``), then ``note`` in grey (plain text, escaped)."""
    return f"**{title_html}** <span style='{NOTE}'>{html.escape(note, quote=False)}</span>"
