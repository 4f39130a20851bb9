"""What one attack returns (the clean and attacked explanations, the measures of paper 003 section 2.3) and the
error of an input or method it cannot handle."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from evaluation.adversarial import measures
from models import ModelError


class AttackError(ModelError):
    """An input or method the attack cannot handle; the message says what to do."""


@dataclass
class AttackResult:
    method: str
    config: dict
    tokens: list[str]
    positions: list[int]                  # token positions of the word tokens (the attacked features)
    k: int
    original_shares: np.ndarray           # |a|/sum|a| over ``positions``, clean input
    attacked_shares: np.ndarray           # the same on the returned iterate
    original_scores: np.ndarray           # signed attributions over ``positions``
    attacked_scores: np.ndarray
    original_class: int
    attacked_class: int
    original_probability: float           # m(x): probability of the original class
    attacked_probability: float           # m(x + delta)
    steps_taken: int
    stop_reason: str                      # "early stop", "step budget", "stopped by the user"
    delta_linf: float
    delta: np.ndarray                     # the returned perturbation at ``positions`` (positions x hidden)
    replaced_words: list[dict] = field(default_factory=list)  # nearest vocabulary token where it changed
    seconds: float = 0.0
    windows: dict | None = None           # a document read in windows: its windows and rule (models/windows.py)

    @property
    def class_kept(self) -> bool:
        return self.attacked_class == self.original_class

    @property
    def rank_change(self) -> float:
        return measures.rank_change(measures.top_k(self.original_shares, self.k),
                                    measures.top_k(self.attacked_shares, self.k))

    @property
    def top_k_sum_change(self) -> float:
        return measures.top_k_sum_change(self.original_shares, self.attacked_shares, self.k)

    @property
    def probability_change(self) -> float:
        return measures.probability_change(self.original_probability, self.attacked_probability)

    def measures(self) -> dict:
        return {"rank_change": self.rank_change, "top_k_sum_change": self.top_k_sum_change,
                "probability_change": self.probability_change, "class_kept": float(self.class_kept)}

    def to_dict(self) -> dict:
        out = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items() if k != "delta"}
        return {**out, **self.measures()}
