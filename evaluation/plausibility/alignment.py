"""Aligning a human rationale (a 0/1 mask over every word of the text, then the pair) with an explanation's word
scores (over the words the model saw): words cut by truncation are left out or counted as never highlighted."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corpora.records import split_words, word_spans


@dataclass(frozen=True)
class Aligned:
    """Scores and human mask over the same words, with what truncation did."""

    scores: np.ndarray
    human: np.ndarray
    segments: tuple[int, ...]
    words: tuple[str, ...]
    human_cut: int  # human words the explanation could not see (cut by truncation)
    words_cut: int


def kept_word_indices(encoding) -> list[int]:
    """For each word of ``encoding.words`` its index among the words of text then pair (before truncation)."""

    text_spans = {span: i for i, span in enumerate(word_spans(encoding.text))}
    n_text = len(text_spans)
    pair_spans = {span: n_text + i for i, span in enumerate(word_spans(encoding.pair))} if encoding.pair else {}
    indices = []
    for span, segment in zip(encoding.word_spans, encoding.word_segment):
        table = text_spans if segment == 0 else pair_spans
        if tuple(span) not in table:
            raise ValueError("the encoding's words do not come from this text (was it encoded from another input?)")
        indices.append(table[tuple(span)])
    return indices


def align(encoding, word_scores, rationale, truncation: str = "drop") -> Aligned:
    """Put an explanation's word scores (over ``encoding.words``) and a rationale (over all words) side by side."""

    all_words = split_words(encoding.text) + (split_words(encoding.pair) if encoding.pair else [])
    rationale = np.asarray(rationale, dtype=bool)
    if rationale.size != len(all_words):
        raise ValueError(f"The human rationale marks {rationale.size} words but the input has {len(all_words)}; "
                         f"it must be a 0/1 mask over the words of the text (then the pair).")
    scores = np.asarray(word_scores, dtype=np.float64)
    if scores.size != encoding.n_words:
        raise ValueError(f"{scores.size} word scores for {encoding.n_words} explained words.")
    kept = kept_word_indices(encoding)
    human_cut = int(rationale.sum() - rationale[kept].sum())
    if truncation == "drop":
        return Aligned(scores, rationale[kept], tuple(encoding.word_segment), tuple(encoding.words), human_cut,
                       len(all_words) - len(kept))
    full = np.full(len(all_words), np.nan)
    full[kept] = scores
    n_text = len(split_words(encoding.text))
    segments = tuple(0 if i < n_text else 1 for i in range(len(all_words)))
    return Aligned(full, rationale, segments, tuple(all_words), human_cut, len(all_words) - len(kept))
