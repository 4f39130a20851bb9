"""Agreement between explanation methods on one input: rank correlation of word scores, top-k words.

Spearman's rho and Kendall's tau-b between every pair of methods' word scores, on |score| by default
(methods differ in sign conventions: a signed and an unsigned method can only be compared by magnitude) or
on the signed scores; NaN where a method's scores are constant. Both are computed for all pairs at once as
cosines: rho between centered average ranks, tau-b between the signs of all pairwise differences (the same
values as ``evaluation.statistics.spearman`` / ``kendall``, i.e. scipy, without a call per pair).

Caveat (paper 001 section 2.1): agreement between importance measures is not evidence of faithfulness;
two methods can agree and both be wrong. Use the faithfulness metrics for that.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy.stats import rankdata

from explainers import Explanation

CAVEAT = ("Agreement is not faithfulness: methods can agree with each other and all be wrong about what the model "
          "uses (paper 001, section 2.1). Judge faithfulness with the faithfulness metrics.")


MEASURES = {"spearman": ("Spearman's rho", "Pearson correlation of the (average) ranks"),
            "kendall": ("Kendall's tau-b", "concordant minus discordant pairs, tie-corrected")}


def spearman_features(vectors: np.ndarray) -> np.ndarray:
    """Centered average ranks: Spearman's rho is the cosine between two of these."""
    ranks = np.apply_along_axis(rankdata, 1, vectors) if vectors.size else vectors
    return ranks - ranks.mean(axis=1, keepdims=True)


def kendall_features(vectors: np.ndarray) -> np.ndarray:
    """sign(a_i - a_j) over all pairs i < j: Kendall's tau-b is the cosine between two of these."""
    i, j = np.triu_indices(vectors.shape[1], k=1)
    return np.sign(vectors[:, i] - vectors[:, j])


def cosine_matrix(features: np.ndarray) -> np.ndarray:
    """All pairwise cosines in one product; NaN for an all-zero row (a method with constant scores)."""
    norms = np.sqrt((features ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        matrix = (features @ features.T) / np.outer(norms, norms)
    matrix[(norms == 0)[:, None] | (norms == 0)[None, :]] = np.nan
    return np.clip(matrix, -1.0, 1.0)


@dataclass(frozen=True)
class Agreement:
    method_ids: tuple[str, ...]
    labels: tuple[str, ...]
    measure: str
    absolute: bool
    matrix: np.ndarray  # (methods, methods), symmetric, 1 on the diagonal (NaN for constant scores)

    def to_rows(self) -> list[dict]:
        return [{"method": label, **{other: (None if np.isnan(v) else float(v)) for other, v in zip(self.labels, row)}}
                for label, row in zip(self.labels, self.matrix)]


def comparable_scores(explanation: Explanation, absolute: bool) -> np.ndarray:
    scores = np.asarray(explanation.word_scores, dtype=np.float64)
    return np.abs(scores) if absolute else scores


def agreement_matrix(explanations: Sequence[Explanation], measure: str = "spearman",
                     absolute: bool = True) -> Agreement:
    """Pairwise rank correlation of the methods' word scores (all explanations of the same input)."""
    if measure not in MEASURES:
        raise ValueError(f"Unknown agreement measure '{measure}'; choose one of {', '.join(MEASURES)}.")
    explanations = list(explanations)
    if len({e.words for e in explanations}) > 1:
        raise ValueError("Agreement needs explanations of the same input (the word lists differ).")
    vectors = np.array([comparable_scores(e, absolute) for e in explanations]).reshape(len(explanations), -1)
    matrix = cosine_matrix(spearman_features(vectors) if measure == "spearman" else kendall_features(vectors))
    return Agreement(tuple(e.method_id for e in explanations), tuple(e.method_label for e in explanations),
                     measure, absolute, matrix)


def top_words(explanation: Explanation, k: int = 3, absolute: bool = False) -> list[tuple[str, float]]:
    """The k highest-scoring words (by |score| when ``absolute``); ties keep reading order."""
    scores = comparable_scores(explanation, absolute)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(explanation.words[i], float(explanation.word_scores[i])) for i in order]


def top_k_table(explanations: Sequence[Explanation], k: int = 3, absolute: bool = False) -> list[dict]:
    """One row per method: its top-k words (paper 004's comparison table layout)."""
    rows = []
    for e in explanations:
        row = {"method": e.method_label, "family": e.family}
        for rank, (word, score) in enumerate(top_words(e, k, absolute), start=1):
            row[f"#{rank}"] = f"{word} ({score:+.3g})"
        rows.append(row)
    return rows
