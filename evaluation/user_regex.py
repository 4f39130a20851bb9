"""A user's regular expression, run so that it cannot freeze the server.

Python's ``re`` holds the GIL while it matches: a pattern with catastrophic backtracking (``(.*)*\\d`` over a
dataset) stops every session of the server until it ends, minutes or hours later. The ``regex`` package matches
with the same syntax and case-insensitive semantics for the patterns ``re`` accepts, releases the GIL while it
matches (``concurrent=True``) and stops at a ``timeout``. One search over many texts shares one time budget,
``EXWB_REGEX_SECONDS`` (1 s by default): a search that needs more ends with ``PatternError`` and says what to do.
Every place a user's pattern is matched goes through ``search_texts``.
"""
from __future__ import annotations

import time
from collections.abc import Iterable

import regex

import settings
from models import UserFacingError


class PatternError(UserFacingError):
    """A user's pattern that is not a regular expression, or that took longer than its time budget."""


def compile_pattern(pattern: str) -> regex.Pattern:
    """The pattern, case-insensitive (``PatternError`` when it is not a regular expression)."""
    try:
        return regex.compile(pattern, regex.IGNORECASE)
    except regex.error as error:
        raise PatternError(f"The search '{pattern}' is not a valid regular expression ({error}); fix it or untick "
                           f"'regular expression' to search for the text as it is.") from None


def search_texts(pattern: str, texts: Iterable[str], seconds: float | None = None) -> list[bool]:
    """Whether ``pattern`` occurs in each text (case-insensitive), within ``seconds`` for all texts together
    (default ``settings.regex_seconds()``); ``PatternError`` when the budget runs out."""
    budget = settings.regex_seconds() if seconds is None else seconds
    compiled = compile_pattern(pattern)
    deadline = time.monotonic() + budget
    found = []
    try:
        for text in texts:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            found.append(compiled.search(text, timeout=left, concurrent=True) is not None)
    except TimeoutError:
        raise PatternError(f"The regular expression '{pattern}' took too long (more than {budget:g} s over the "
                           f"texts searched; nested repeats such as (.*)* or (a|a)* try exponentially many ways to "
                           f"match). Simplify the pattern, or untick 'regular expression' to search for the text "
                           f"as it is.") from None
    return found
