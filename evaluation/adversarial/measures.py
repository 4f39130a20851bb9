"""The three measures of an attack on an explanation (paper 003, section 2.3).

All three compare the clean explanation a_x with the attacked one a_{x+delta} of the same tokens. Following the
thesis code, the attributions are first made comparable as shares of importance, |a| / sum|a| (the sign is lost).
"""
from __future__ import annotations

import numpy as np


def importance_shares(scores: np.ndarray) -> np.ndarray:
    """|a| / sum|a| (all zeros stay zeros)."""
    magnitude = np.abs(np.asarray(scores, dtype=np.float64))
    total = magnitude.sum()
    return magnitude / total if total > 0 else magnitude


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, largest first (ties: the earlier position first)."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")[:k]


def rank_change(original_top: np.ndarray, attacked_top: np.ndarray) -> float:
    """Share of the k positions whose index differs (position-wise "not equal", as the thesis's prose, its example
    and its code use; its printed formula has "="). [12, 3, 7] vs [3, 15, 7] -> 2/3."""
    original_top, attacked_top = np.asarray(original_top), np.asarray(attacked_top)
    if original_top.size == 0:
        return float("nan")
    return float(np.mean(original_top != attacked_top))


def top_k_sum_change(original_shares: np.ndarray, attacked_shares: np.ndarray, k: int) -> float:
    """sum over the clean top-k of (share before - share after), in [-1, 1]: how much importance left them."""
    indices = top_k(original_shares, k)
    return float(np.sum(np.asarray(original_shares)[indices] - np.asarray(attacked_shares)[indices]))


def probability_change(original_probability: float, attacked_probability: float) -> float:
    """m(x) - m(x + delta): the predicted class's probability before minus after (signed)."""
    return float(original_probability - attacked_probability)
