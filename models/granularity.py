"""Features coarser than words, for computing: sentences and user-given spans as the players.

A ``UnitEncoding`` is an encoding whose "words" are units (sentences or spans): each unit's text is its words
joined by single spaces, ``token_word`` maps every token to its unit, and ``base`` is the word-level encoding
(a plain one or a document read in windows). Removing a unit removes all its words through the one perturbation
engine (``models.perturb`` expands the keep mask to the base's words), so leave-one-out, occlusion, Shapley
sampling, LIME, KernelSHAP and partition SHAP take units as their players with no change, and the faithfulness
curves remove by unit.

Sentences (no sentence splitter is installed in the environment, so a documented rule): a sentence ends at a word
whose last character, after closing quotes and brackets, is ``.``, ``!`` or ``?`` (a few abbreviations such as
"Mr." and single capital initials excepted). Text with no sentence end at all, and any sentence longer than
``LONG_SENTENCE_WORDS``, is split every ``CHUNK_WORDS`` words (stated in ``notes``).

Spans: character ranges ``(start, end)`` into the text or word ranges; a character range takes every word it
touches. Overlapping or out-of-range spans are refused with a message naming them; the words outside every span
are grouped into the runs between spans (each run one more unit, marked "rest").
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Literal, TypeGuard, overload

import numpy as np

from models.encoding import Encoding
from models.errors import InputError

GRANULARITIES = ("word", "sentence", "span")
SENTENCE_END = (".", "!", "?")
CLOSERS = "\"')]}»”’"
ABBREVIATIONS = {"mr.", "mrs.", "ms.", "dr.", "prof.", "st.", "vs.", "etc.", "e.g.", "i.e.", "jr.", "sr.", "no."}
CHUNK_WORDS = 25
LONG_SENTENCE_WORDS = 80


@dataclass(frozen=True)
class UnitEncoding(Encoding):
    """An encoding whose players are units of ``base``'s words (``groups``: word ranges of ``base``)."""

    base: Encoding = field(kw_only=True)  # required; keyword-only as the fields before it have defaults
    groups: tuple[range, ...] = ()
    granularity: str = "sentence"
    kinds: tuple[str, ...] = ()  # per unit: "sentence", "span" or "rest"
    notes: tuple[str, ...] = field(default=(), compare=False)

    @cached_property
    def key(self) -> str:
        payload = json.dumps([self.base.key, self.granularity, [[g.start, g.stop] for g in self.groups]])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    @cached_property
    def unit_of_word(self) -> np.ndarray:
        out = np.empty(self.base.n_words, dtype=np.int64)
        for unit, group in enumerate(self.groups):
            out[group.start:group.stop] = unit
        return out

    def word_keep(self, keep: np.ndarray) -> np.ndarray:
        """A keep mask over units -> the same mask over the base's words."""
        return np.atleast_2d(np.asarray(keep, dtype=bool))[:, self.unit_of_word]

    def document_logits(self, classifier) -> np.ndarray:
        """The prediction is the base's (units change what is removed, not what is read)."""
        return classifier.logits_of(self.base)

    def describe(self) -> dict:
        return {"granularity": self.granularity, "units": len(self.groups),
                "unit_words": [[g.start, g.stop] for g in self.groups], "kinds": list(self.kinds),
                "notes": list(self.notes)}


def is_units(encoding: Encoding) -> TypeGuard[UnitEncoding]:
    return isinstance(encoding, UnitEncoding)


def _ends_sentence(word: str) -> bool:
    core = word.rstrip(CLOSERS)
    if not core.endswith(SENTENCE_END):
        return False
    lowered = core.lower()
    return lowered not in ABBREVIATIONS and not (len(core) == 2 and core[0].isupper())  # "J." an initial


def sentence_groups(words: tuple[str, ...] | list[str]) -> tuple[list[range], list[str]]:
    """Word ranges of the sentences (the rule in the module docstring) and notes on any split by length."""
    groups, start, notes = [], 0, []
    for i, word in enumerate(words):
        if _ends_sentence(word):
            groups.append(range(start, i + 1))
            start = i + 1
    if start < len(words):
        groups.append(range(start, len(words)))
    if len(groups) == 1 and len(words) > CHUNK_WORDS:
        notes.append(f"No sentence punctuation: the text was split every {CHUNK_WORDS} words.")
        return [range(a, min(a + CHUNK_WORDS, len(words))) for a in range(0, len(words), CHUNK_WORDS)], notes
    out = []
    for group in groups:
        if len(group) > LONG_SENTENCE_WORDS:
            notes.append(f"A sentence of {len(group)} words was split every {CHUNK_WORDS} words.")
            out += [range(a, min(a + CHUNK_WORDS, group.stop)) for a in range(group.start, group.stop, CHUNK_WORDS)]
        else:
            out.append(group)
    return out, notes


def span_groups(encoding: Encoding, spans, unit: str = "char") -> tuple[list[range], list[str]]:
    """Word ranges of user spans (``unit`` "char" or "word"), validated, plus the "rest" runs between them."""
    if unit not in ("char", "word"):
        raise InputError(f"Span unit '{unit}' is unknown: give character ('char') or word ('word') ranges.")
    limit = len(encoding.text) if unit == "char" else encoding.n_words
    ranges = []
    for number, span in enumerate(spans, start=1):
        try:
            start, end = int(span[0]), int(span[1])
        except (TypeError, ValueError, IndexError):
            raise InputError(f"Span {number} ({span!r}) is not a pair of numbers (start, end).") from None
        if not 0 <= start < end <= limit:
            raise InputError(f"Span {number} ({start}, {end}) is out of range: {unit} ranges must satisfy 0 <= start "
                             f"< end <= {limit} for this text.")
        if unit == "char":
            inside = [i for i, (a, b) in enumerate(encoding.word_spans) if a < end and b > start]
            if not inside:
                raise InputError(f"Span {number} ({start}, {end}) holds only whitespace: no word to use.")
            start, end = inside[0], inside[-1] + 1
        ranges.append((start, end, number))
    ranges.sort()
    for (a1, e1, n1), (a2, e2, n2) in zip(ranges, ranges[1:]):
        if a2 < e1:
            raise InputError(f"Spans {n1} and {n2} overlap (words {a1}-{e1 - 1} and {a2}-{e2 - 1}); give spans that "
                             f"do not share a word.")
    groups, kinds, cursor = [], [], 0
    for start, end, _ in ranges:
        if cursor < start:
            groups.append(range(cursor, start))
            kinds.append("rest")
        groups.append(range(start, end))
        kinds.append("span")
        cursor = end
    if cursor < encoding.n_words:
        groups.append(range(cursor, encoding.n_words))
        kinds.append("rest")
    return groups, kinds


@overload
def by_units(encoding: Encoding, granularity: Literal["sentence", "span"] = "sentence", spans=None,
             span_unit: str = "char") -> UnitEncoding: ...


@overload
def by_units(encoding: Encoding, granularity: str = "sentence", spans=None, span_unit: str = "char") -> Encoding: ...


def by_units(encoding: Encoding, granularity: str = "sentence", spans=None, span_unit: str = "char") -> Encoding:
    """The encoding with sentences or spans as its players ("word": the encoding itself)."""
    if granularity not in GRANULARITIES:
        raise InputError(f"Unknown granularity '{granularity}'; choose one of {', '.join(GRANULARITIES)}.")
    if granularity == "word":
        return encoding
    if encoding.pair is not None:
        raise InputError("Sentence and span granularity work on single texts; explain a sentence pair word by word.")
    if granularity == "sentence":
        groups, notes = sentence_groups(encoding.words)
        kinds = ["sentence"] * len(groups)
    else:
        if not spans:
            raise InputError("Span granularity needs spans: give character or word ranges (start, end).")
        groups, kinds = span_groups(encoding, spans, span_unit)
        notes = []
    word_unit = np.empty(encoding.n_words, dtype=np.int64)
    for unit, group in enumerate(groups):
        word_unit[group.start:group.stop] = unit
    unit_of_token = tuple(int(word_unit[w]) if w >= 0 else -1 for w in encoding.token_word)
    values = {f.name: getattr(encoding, f.name) for f in fields(Encoding)}
    values.update(token_word=unit_of_token,
                  words=tuple(" ".join(encoding.words[g.start:g.stop]) for g in groups),
                  word_segment=tuple(0 for _ in groups),
                  word_spans=tuple((encoding.word_spans[g.start][0], encoding.word_spans[g.stop - 1][1])
                                   for g in groups))
    return UnitEncoding(**values, base=encoding, groups=tuple(groups), granularity=granularity, kinds=tuple(kinds),
                        notes=tuple(notes))
