"""Sub-word -> word aggregation and score normalization (view-time; stored scores stay raw)."""
from __future__ import annotations

import numpy as np

AGGREGATIONS = ("sum", "mean", "max", "absmax", "first", "l2")
NORMALIZATIONS = ("none", "max-abs", "l1", "abs-sum")
NORMALIZATION_LABELS = {
    "none": "raw scores",
    "max-abs": "divided by the largest |score| (sign kept, range -1..1)",
    "l1": "divided by the sum of |scores| (sign kept)",
    "abs-sum": "|score| / sum |scores| (sign dropped, sums to 1; paper 003's ensemble normalization)",
}


def aggregate_to_words(token_scores: np.ndarray, token_word, n_words: int, how: str = "sum") -> np.ndarray:
    """Combine the scores of each word's sub-word tokens; special tokens (word -1) are left out."""
    token_word = np.asarray(token_word)
    scores = np.asarray(token_scores, dtype=np.float64)
    out = np.zeros(n_words, dtype=np.float64)
    for word in range(n_words):
        part = scores[token_word == word]
        if part.size == 0:
            continue
        if how == "sum":
            out[word] = part.sum()
        elif how == "mean":
            out[word] = part.mean()
        elif how == "max":
            out[word] = part.max()
        elif how == "absmax":
            out[word] = part[np.argmax(np.abs(part))]
        elif how == "first":
            out[word] = part[0]
        elif how == "l2":
            out[word] = np.sqrt((part ** 2).sum())
        else:
            raise ValueError(f"Unknown aggregation '{how}'; choose one of {', '.join(AGGREGATIONS)}.")
    return out


def normalize(scores: np.ndarray, how: str = "none") -> np.ndarray:
    scores = np.asarray(scores, dtype=np.float64)
    if how == "none" or scores.size == 0:
        return scores.copy()
    if how == "max-abs":
        denominator = np.abs(scores).max()
    elif how in ("l1", "abs-sum"):
        denominator = np.abs(scores).sum()
    else:
        raise ValueError(f"Unknown normalization '{how}'; choose one of {', '.join(NORMALIZATIONS)}.")
    if denominator == 0 or not np.isfinite(denominator):
        return np.zeros_like(scores)
    return (np.abs(scores) if how == "abs-sum" else scores) / denominator
