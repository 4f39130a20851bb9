"""Tokenization with word alignment.

Words are whitespace words (``corpora.records``); every token is mapped to the word that contains
its first character, through the fast tokenizer's offsets, so the mapping works for WordPiece,
byte-level BPE and SentencePiece tokenizers alike, for single sentences and sentence pairs.
"""
from __future__ import annotations

import bisect
import hashlib
import json
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from corpora.invisible import remove_invisible
from corpora.records import word_spans
from models.errors import InputError


@dataclass(frozen=True)
class Encoding:
    """One tokenized input. ``token_word[i]`` is the word of token i, or -1 for special tokens."""

    text: str
    pair: str | None
    input_ids: tuple[int, ...]
    token_type_ids: tuple[int, ...] | None
    tokens: tuple[str, ...]
    token_word: tuple[int, ...]
    words: tuple[str, ...]
    word_segment: tuple[int, ...]
    word_spans: tuple[tuple[int, int], ...]
    n_words_total: int
    truncated_tokens: int
    removed_invisible: tuple[str, ...] = ()  # invisible characters taken out of text and pair (check_text)

    @property
    def n_tokens(self) -> int:
        return len(self.input_ids)

    @property
    def n_words(self) -> int:
        return len(self.words)

    @property
    def special(self) -> tuple[bool, ...]:
        return tuple(w < 0 for w in self.token_word)

    @property
    def truncated_words(self) -> int:
        return self.n_words_total - self.n_words

    @cached_property
    def token_word_array(self) -> np.ndarray:
        return np.asarray(self.token_word, dtype=np.int64)

    def words_of_segment(self, segment: int) -> list[str]:
        return [w for w, s in zip(self.words, self.word_segment) if s == segment]

    @property
    def segment_boundary(self) -> int | None:
        """Index of the first word of the pair (None for single sentences)."""
        if self.pair is None:
            return None
        return next((i for i, s in enumerate(self.word_segment) if s == 1), self.n_words)

    @cached_property
    def key(self) -> str:
        """Content hash used in cache keys."""
        return self.text_key()

    def text_key(self) -> str:
        """The hash of the tokenized input alone (a subclass's ``key`` adds how it is read)."""
        payload = json.dumps([self.text, self.pair, self.input_ids] + ([self.removed_invisible] if
                                                                      self.removed_invisible else []),
                             ensure_ascii=False)  # removed characters: the same words, with a note the others lack
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


def _check_decoded(text: str) -> None:
    """Refuse the lone surrogates Python makes of bytes that were not UTF-8 (a command-line argument from a terminal
    in another encoding): the tokenizer cannot read them, and guessing their letters would change the input."""
    raw = [ord(c) - 0xDC00 for c in text if "\udc80" <= c <= "\udcff"]
    if raw or any("\ud800" <= c <= "\udfff" for c in text):
        shown = f" (byte 0x{raw[0]:02x})" if raw else ""
        raise InputError(f"The text holds bytes that are not UTF-8{shown}: a terminal or a file in another encoding "
                         f"(Latin-1?). Give the text in UTF-8 (set the terminal to UTF-8, or convert the file: "
                         f"iconv -f latin1 -t utf-8).")


def check_text(text: str, pair: str | None) -> tuple[str, str | None, tuple[str, ...]]:
    """(text, pair, invisible characters removed): what every model reads, typed or from a dataset. Invisible
    characters are removed here, once (``corpora.invisible``; the caller reports them). An empty text is refused;
    so is an empty second segment where one is given: a sentence-pair (NLI) model reads both, and explaining the
    premise alone as a single sentence would answer another question than the one asked."""
    text, removed = remove_invisible("" if text is None else str(text))
    _check_decoded(text if pair is None else text + str(pair))
    if not text.strip():
        if removed:  # say what was there: the user typed something, it was all invisible
            raise InputError(f"The text has no words: it held only {len(removed)} invisible character(s) (e.g. "
                             f"zero-width spaces), which are not read. Type a sentence (or pick an example) to "
                             f"explain.")
        raise InputError("The text is empty. Type a sentence (or pick an example) to explain.")
    if pair is not None:
        pair, removed_from_pair = remove_invisible(str(pair))
        removed += removed_from_pair
        if not pair.strip():
            raise InputError("The second segment (the hypothesis) is empty. A sentence pair needs both: write the "
                             "hypothesis, or explain a single sentence ('Your text' in the sidebar; no --pair on "
                             "the command line).")
    return text, pair, removed


def word_of_tokens(offsets, sequence_ids, spans_by_segment: list[list[tuple[int, int]]], word_base: list[int],
                   texts: list[str]):
    """Word index of each token from its character offsets (-1 for special tokens)."""
    starts = [[s for s, _ in spans] for spans in spans_by_segment]
    token_word = []
    for (start, end), segment in zip(offsets, sequence_ids):
        if segment is None:
            token_word.append(-1)
            continue
        # Byte-level BPE tokenizers whose offsets are not trimmed start "Ġmovie" at the space before the word:
        # the word is where the token's first visible character is.
        text = texts[segment]
        visible = next((i for i in range(start, end) if not text[i].isspace()), start)
        start = visible
        # the last word starting at or before the token; a token in whitespace (rare) joins the previous word
        index = max(0, bisect.bisect_right(starts[segment], start) - 1)
        token_word.append(word_base[segment] + index)
    return token_word


def build_encoding(tokenizer, text: str, pair: str | None, max_length: int) -> Encoding:
    text, pair, removed = check_text(text, pair)
    spans = [word_spans(text)] + ([word_spans(pair)] if pair is not None else [])
    base = [0, len(spans[0])]
    enc = tokenizer(text, pair, truncation=True, max_length=max_length, return_offsets_mapping=True)
    full_length = len(tokenizer(text, pair, truncation=False)["input_ids"])
    token_word = word_of_tokens(enc["offset_mapping"], enc.sequence_ids(), spans, base,
                                [text] + ([pair] if pair is not None else []))
    # Keep the words that still have at least one token after truncation, renumbered densely.
    kept = sorted({w for w in token_word if w >= 0})
    renumber = {old: new for new, old in enumerate(kept)}
    all_words = [(text[s:e], 0, (s, e)) for s, e in spans[0]]
    if pair is not None:
        all_words += [(pair[s:e], 1, (s, e)) for s, e in spans[1]]
    words = tuple(all_words[i][0] for i in kept)
    return Encoding(
        text=text,
        pair=pair,
        input_ids=tuple(enc["input_ids"]),
        token_type_ids=tuple(enc["token_type_ids"]) if "token_type_ids" in enc else None,
        tokens=tuple(tokenizer.convert_ids_to_tokens(enc["input_ids"])),
        token_word=tuple(renumber[w] if w >= 0 else -1 for w in token_word),
        words=words,
        word_segment=tuple(all_words[i][1] for i in kept),
        word_spans=tuple(all_words[i][2] for i in kept),
        n_words_total=len(all_words),
        truncated_tokens=max(0, full_length - len(enc["input_ids"])),
        removed_invisible=removed,
    )
