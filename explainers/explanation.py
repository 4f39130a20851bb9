"""The Explanation record: scores on tokens and words, plus the provenance of every number."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from explainers.aggregate import normalize


@dataclass(frozen=True)
class Explanation:
    """One method's attribution for one input and one target class.

    ``token_scores`` is None for methods that work on whole words (leave-one-out, LIME, ...); then the
    sub-word view shows each token with its word's score. ``provenance`` records the method, every
    parameter, baseline, removal operator, sign convention, aggregation, seed, cost and library versions.
    """

    method_id: str
    method_label: str
    family: str
    signed: bool
    tokens: tuple[str, ...]
    token_word: tuple[int, ...]
    words: tuple[str, ...]
    word_segment: tuple[int, ...]
    word_scores: np.ndarray
    token_scores: np.ndarray | None
    target: int
    target_label: str
    provenance: dict
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self):
        for scores in (self.word_scores, self.token_scores):
            if scores is not None:
                scores.setflags(write=False)  # shared through the cache: nobody may change it in place

    @property
    def n_words(self) -> int:
        return len(self.words)

    def scores(self, level: str = "word", normalization: str = "none", absolute: bool = False) -> np.ndarray:
        """Word or token scores, normalized for display; token level falls back to the word score."""
        if level == "word":
            values = self.word_scores
        elif self.token_scores is not None:
            values = self.token_scores
        else:
            values = np.array([self.word_scores[w] if w >= 0 else 0.0 for w in self.token_word])
        values = np.abs(values) if absolute else values
        return normalize(values, normalization)

    def ranking(self) -> np.ndarray:
        """Word indices from most to least important (by signed score; ties keep reading order)."""
        return np.argsort(-self.word_scores, kind="stable")

    def top_words(self, k: int = 3) -> list[str]:
        return [self.words[i] for i in self.ranking()[:k]]

    def to_dict(self) -> dict:
        return {
            "method_id": self.method_id, "method_label": self.method_label, "family": self.family,
            "signed": self.signed, "target": self.target, "target_label": self.target_label,
            "words": list(self.words), "word_segment": list(self.word_segment),
            "word_scores": [float(x) for x in self.word_scores],
            "tokens": list(self.tokens), "token_word": list(self.token_word),
            "token_scores": None if self.token_scores is None else [float(x) for x in self.token_scores],
            "warnings": list(self.warnings), "provenance": self.provenance,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Explanation:
        token_scores = data.get("token_scores")
        return cls(method_id=data["method_id"], method_label=data["method_label"], family=data["family"],
                   signed=data["signed"], tokens=tuple(data["tokens"]), token_word=tuple(data["token_word"]),
                   words=tuple(data["words"]), word_segment=tuple(data["word_segment"]),
                   word_scores=np.asarray(data["word_scores"], dtype=np.float64),
                   token_scores=None if token_scores is None else np.asarray(token_scores, dtype=np.float64),
                   target=data["target"], target_label=data["target_label"], provenance=data["provenance"],
                   warnings=tuple(data.get("warnings", ())))
