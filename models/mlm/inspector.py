"""The candidate inspector (paper 000 figure 1 and App. B): for every word of an input, the masked LM's top
replacements, its probability of the word itself and that word's rank, from one batched masked-LM pass.

A word the masked LM predicts itself with high probability (``HIGH_CONFIDENCE``) gets an Input Marginalization
attribution near 0 whatever the classifier does: the inspector is how the pages and IM's warning find such words.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch  # noqa: E402  (runtime sets the environment first)

from models.encoding import Encoding
from models.mlm.filler import Candidate, MaskedLMFiller

HIGH_CONFIDENCE = 0.5  # top-1 = the original word at least this likely: IM's attribution is near 0 by construction


@dataclass(frozen=True)
class WordCandidates:
    """The masked LM's view of one word: its top replacements and whether it is predictable."""

    index: int
    word: str
    segment: int
    candidates: tuple[Candidate, ...]
    original_probability: float  # the masked LM's probability of the word itself (0 if not a single vocab word)
    original_rank: int | None  # 1 = the top-1 candidate is the original word; None = not among the listed

    @property
    def top1_is_original(self) -> bool:
        return self.original_rank == 1

    def predictable(self, threshold: float = HIGH_CONFIDENCE) -> bool:
        """The masked LM predicts the word itself with probability >= threshold (paper 000 App. B: IM's
        attribution of such a word is bounded by about 1 - p whatever the classifier does)."""
        return self.top1_is_original and self.original_probability >= threshold

    def to_dict(self) -> dict:
        return {"index": self.index, "word": self.word, "segment": self.segment,
                "candidates": [dataclasses.asdict(c) for c in self.candidates],
                "original_probability": self.original_probability, "original_rank": self.original_rank}


def inspect_candidates(filler: MaskedLMFiller, encoding: Encoding, k: int = 3) -> list[WordCandidates]:
    """Top-k replacements of every word, one word masked at a time (one batched masked-LM pass), with the
    masked LM's probability of the original word itself and its rank (paper 000 figure 1 and App. B)."""
    n = encoding.n_words
    if n == 0:
        return []
    rows = [(list(encoding.words), list(encoding.word_segment))] * n
    valid = torch.as_tensor(filler._valid)

    def reduce(probabilities, owners):
        ranked = filler._ranked(probabilities, k, 0.0, [None] * len(owners))
        out = []
        for distribution, (_, index), candidates in zip(probabilities, owners, ranked):
            word = encoding.words[index]
            original = filler.word_probability(distribution, word)
            rank = None
            if original > 0:
                proposable = distribution[valid[:len(distribution)].to(distribution.device)]
                rank = 1 + int((proposable > original).sum())
            out.append((candidates, original, rank))
        return out

    results = filler._run(rows, [{i} for i in range(n)], reduce)
    table = []
    for index, [result] in enumerate(results):
        candidates, original, rank = result if result is not None else ([], 0.0, None)
        table.append(WordCandidates(index, encoding.words[index], encoding.word_segment[index], tuple(candidates),
                                    original, rank))
    return table
