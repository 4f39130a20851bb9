"""Masked-LM candidates for a whole phrase (paper 000 section 7: IM "at the phrase level").

A phrase S is a run of consecutive words. Every word of S is replaced by one mask token at once and the masked LM
reads the input once (the whole input, both segments of a pair, as for one word: paper 000 section 2 [code]). A
masked LM predicts each mask given the context, not given the other masks, so the phrase's likelihood is the
product of its masks' probabilities,

    p(x~_S | x_-S) = prod_{t in S} p_t(x~_t | x_-S),

and the k most likely phrases under that product are found exactly: a phrase among the k best has each word
among its position's k best (any other word could be swapped for k better ones), and a beam of width k over the
positions keeps every prefix of the k best products (the factors are independent). One-piece words only, as for
one word (``MaskedLMFiller._ranked``).
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass

from models.encoding import Encoding
from models.mlm.filler import Candidate, MaskedLMFiller


@dataclass(frozen=True)
class PhraseCandidate:
    """One replacement of a phrase: its words and their joint likelihood (the product above)."""

    words: tuple[str, ...]
    probability: float

    def matches(self, words) -> bool:
        return len(words) == len(self.words) and all(a.lower() == b.lower() for a, b in zip(self.words, words))


def best_products(per_position: list[list[Candidate]], k: int) -> list[PhraseCandidate]:
    """The k most likely phrases when the positions are independent (exact: beam of width k), best first."""
    beams: list[tuple[float, tuple[str, ...]]] = [(1.0, ())]
    for candidates in per_position:
        if not candidates:
            return []
        beams = heapq.nlargest(k, ((p * c.probability, words + (c.word,)) for p, words in beams for c in candidates),
                               key=lambda beam: beam[0])
    return [PhraseCandidate(words, probability) for probability, words in beams]


def phrase_top_k(filler: MaskedLMFiller, encoding: Encoding, spans: list[range], k: int = 10
                 ) -> list[list[PhraseCandidate]]:
    """For each span of ``encoding``'s words: its k most likely replacement phrases (all spans' masked inputs in
    batched masked-LM passes, one input per span). A span with a word cut off by the masked LM's length limit gets
    none."""
    if k < 1:
        raise ValueError("k must be at least 1")
    for span in spans:
        if len(span) == 0 or span.start < 0 or span.stop > encoding.n_words:
            raise ValueError(f"span {span} is not a non-empty range of the input's {encoding.n_words} words")
    rows = [(list(encoding.words), list(encoding.word_segment))] * len(spans)

    def reduce(probabilities, owners):
        return filler._ranked(probabilities, k, 0.0, [None] * len(owners))

    per_mask = filler._run(rows, [set(span) for span in spans], reduce)
    return [best_products(masks, k) if all(m is not None for m in masks) else [] for masks in per_mask]
