"""A removal curve's points: how many words each point removes or keeps (fractions rounded as each paper does,
the step limit of paper 000's Deletion), and the recorded curve of one ranking."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

ROUNDINGS = ("floor", "ceil", "round")


class StepRule(Protocol):
    """What ``steps_limit`` reads of a ``curves.RemovalMetric`` (named here, not imported: curves.py imports this)."""

    @property
    def max_fraction(self) -> float: ...

    @property
    def min_steps(self) -> int: ...


def round_count(value: float, how: str) -> int:
    value = round(value, 9)  # 0.1 * 30 must be 3, not 3.0000000000000004 -> ceil 4
    if how == "floor":
        return int(math.floor(value))
    if how == "ceil":
        return int(math.ceil(value))
    if how == "round":
        return int(math.floor(value + 0.5))
    raise ValueError(f"unknown rounding {how!r}; choose one of {', '.join(ROUNDINGS)}")


def steps_limit(metric: StepRule, n_words: int, n_units: int) -> int:
    """How many one-word steps a step curve takes.

    Paper 000 Deletion (code): K = ceil(0.2 * (n - 1)), K = 2 when that gives <= 1; capped at the words.
    Full curves (max_fraction 1) take every word.
    """
    if metric.max_fraction >= 1.0:
        return n_words
    k = round_count(metric.max_fraction * (n_units - 1), "ceil")
    if k <= 1:
        k = metric.min_steps
    return int(min(max(k, 1), n_words))


@dataclass
class Curve:
    """One ranking's curve for one metric: x, the target's score at each point, and the unperturbed score."""

    metric: str
    x: list[float]
    counts: list[int]
    scores: list[float]
    start: float
    mode: str
    score: str

    def to_dict(self) -> dict:
        return {"metric": self.metric, "x": self.x, "counts": self.counts, "scores": self.scores,
                "start": self.start, "mode": self.mode, "score": self.score}
