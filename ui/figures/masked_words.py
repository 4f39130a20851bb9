"""A sentence as a ROAR-retrained model saw it: the masked words drawn as dark chips. Every word is escaped."""
from __future__ import annotations

import html

CHIP = "background:#333;color:#fff;padding:0 3px;border-radius:3px"


def masked_html(words: list[str], removed: list[bool]) -> str:
    """``removed[i]``: whether ``words[i]`` was masked."""
    return " ".join(f"<span style='{CHIP}'>{html.escape(word)}</span>" if gone else html.escape(word)
                    for word, gone in zip(words, removed))
