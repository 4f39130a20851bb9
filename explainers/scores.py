"""Output scales shared by perturbation methods and metrics: probability and log-odds of a class."""
from __future__ import annotations

import numpy as np

from explainers.contrast import current_foil

SCORES = ("log2-odds", "probability")


def log_odds(logits: np.ndarray, target: int, base: float = 2.0) -> np.ndarray:
    """log_base(p / (1 - p)) of the target class, computed from logits without rounding p to 1.

    For more than two classes 1 - p is the mass of all other classes (paper 000 Eq. 4, log base 2).
    """
    logits = np.atleast_2d(np.asarray(logits, dtype=np.float64))
    others = np.delete(logits, target, axis=1)
    top = others.max(axis=1, keepdims=True)
    rest = top[:, 0] + np.log(np.exp(others - top).sum(axis=1))
    return (logits[:, target] - rest) / np.log(base)


def softmax(logits: np.ndarray) -> np.ndarray:
    logits = np.atleast_2d(np.asarray(logits, dtype=np.float64))
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=1, keepdims=True)


def class_score(logits: np.ndarray, target: int, scale: str) -> np.ndarray:
    """The target's score on ``scale``; inside ``contrast.contrasting(B)``, the target's minus B's."""
    foil = current_foil()
    score = _one_class_score(logits, target, scale)
    return score if foil is None else score - _one_class_score(logits, foil, scale)


def _one_class_score(logits: np.ndarray, target: int, scale: str) -> np.ndarray:
    if scale == "probability":
        return softmax(logits)[:, target]
    if scale == "log2-odds":
        return log_odds(logits, target)
    raise ValueError(f"unknown score scale {scale}")
