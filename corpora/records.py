"""Plain dataset records and the project's single definition of a "word".

A word is a maximal run of non-whitespace characters. Every dataset here is whitespace-tokenised
(SST, ERASER, SNLI) or indexes its human highlights by whitespace words (e-SNLI), so human rationales,
word-level attributions and word-level removal all share this unit without any re-alignment.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_WORD = re.compile(r"\S+")


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans (start, end) of the words of ``text``."""
    return [(m.start(), m.end()) for m in _WORD.finditer(text)]


def split_words(text: str) -> list[str]:
    return _WORD.findall(text)


@dataclass(frozen=True)
class Example:
    """One input of a dataset.

    ``rationale`` is a 0/1 mask over the words of ``text`` followed by the words of ``pair``
    (1 = marked by people), or None where the dataset has no human rationale.
    """

    id: str
    text: str
    label: int | None
    label_names: tuple[str, ...]
    pair: str | None = None
    rationale: tuple[int, ...] | None = None
    dataset: str = ""
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def words(self) -> list[str]:
        words = split_words(self.text)
        if self.pair is not None:
            words += split_words(self.pair)
        return words

    @property
    def label_name(self) -> str | None:
        if self.label is None:
            return None
        return self.label_names[self.label]

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "dataset": self.dataset,
            "text": self.text,
            "pair": self.pair,
            "label": self.label,
            "label_name": self.label_name,
            "rationale": list(self.rationale) if self.rationale is not None else None,
        }


SENTIMENT_LABELS = ("negative", "positive")
NLI_LABELS = ("entailment", "neutral", "contradiction")


class DataError(Exception):
    """A dataset could not be found or read; the message says what to do."""


def mask_from_spans(text: str, spans: list[tuple[int, int]]) -> tuple[int, ...]:
    """Word mask of ``text``: 1 for each word overlapping any of the character ``spans``."""
    mask = []
    for start, end in word_spans(text):
        mask.append(int(any(start < s_end and s_start < end for s_start, s_end in spans)))
    return tuple(mask)
