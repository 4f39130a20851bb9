"""Invisible characters: removed from every input before it is split into tokens, and the reader is told.

A zero-width space inside "gre<U+200B>at" displays as "great" but splits it into "gre" + "at" for a tokenizer,
each scored. The characters removed are Unicode's format characters (general category Cf): the zero-width
space, non-joiner and joiner (U+200B-U+200D), the word joiner (U+2060), the byte-order mark / zero-width
no-break space (U+FEFF), the soft hyphen (U+00AD), direction marks and the like. They change no visible letter,
so removing them joins the pieces the reader sees as one word. ``models.encoding.check_text`` applies this rule
to every text a model reads (typed or from a dataset); the typed-text splitter keeps them inside the word they
touch so that it is that rule which removes them, and says so.
"""
from __future__ import annotations

import unicodedata


def is_invisible(character: str) -> bool:
    return unicodedata.category(character) == "Cf"


def remove_invisible(text: str) -> tuple[str, tuple[str, ...]]:
    """(the text without its invisible characters, the characters removed, in order)."""
    removed = tuple(c for c in text if is_invisible(c))
    return ("".join(c for c in text if not is_invisible(c)) if removed else text), removed


def invisible_note(removed: tuple[str, ...] | list[str]) -> str | None:
    """What to tell the reader about the invisible characters removed (None when there were none)."""
    if not removed:
        return None
    kinds = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'format character').lower()}"
                      for c in dict.fromkeys(removed))
    count = f"{len(removed)} invisible character{'s' if len(removed) > 1 else ''}"
    return (f"Removed {count} ({kinds}) before tokenization: they display as nothing but would split a "
            f"word into pieces scored apart.")
