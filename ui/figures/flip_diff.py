"""A minimal flip (the fewest words removed or replaced so the prediction changes) as a diff of the input: removed
words struck through, each replacement after the word it replaces. Every word is escaped."""
from __future__ import annotations

import html

from evaluation.errors import Flip

REMOVED = "color:#b2182b;background:#fddbc7"
INSERTED = "color:#1b7837;background:#d9f0d3;text-decoration:none"


def flip_diff_html(flip: Flip) -> str:
    parts = []
    for status, word, replacement in flip.diff():
        if status == "kept":
            parts.append(html.escape(word))
        elif status == "removed":
            parts.append(f'<del style="{REMOVED}">{html.escape(word)}</del>')
        else:
            parts.append(f'<del style="{REMOVED}">{html.escape(word)}</del> '
                         f'<ins style="{INSERTED}">{html.escape(replacement or "")}</ins>')
    return f'<div class="xw-flip" style="font-size:1.05em;line-height:1.8">{" ".join(parts)}</div>'
