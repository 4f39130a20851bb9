"""The sentence the Guided tour is about, shown at the top of each step (and its second segment after the
separator). Escaped."""
from __future__ import annotations

import html

STYLE = "font-size:1.15rem;padding:0.5rem 0.8rem;border-left:4px solid #888;margin:0.2rem 0 0.6rem 0"


def input_html(text: str, pair: str | None = None) -> str:
    second = f' <span class="xw-sep">&#8214;</span> {html.escape(pair)}' if pair else ""
    return (f'<div class="xw-tour-input" style="{STYLE}"><span style="opacity:0.7">The input: </span>'
            f'{html.escape(text)}{second}</div>')
