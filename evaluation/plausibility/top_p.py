"""Paper 002's per-document top-p % binarization (s. 4.2, App. A.1; its code ``run_evaluations.py``).

To turn soft scores into a binary rationale, paper 002 selects the top p % of a document's words, with p
predicted per document by a Nadaraya-Watson kernel regression:

- feature x_d: the share of the document's words scoring >= 0.1 (after a per-document min-max normalization
  of methods whose scores are not already in [0, 1]; MaRC's mask is used as it is);
- target y_d: the F1-optimal selection share of that document, searched over ``linspace(0.01, 0.99, 150)``
  (the first best share; 0 when no share reaches an F1 above 0);
- p_d = sum_e w_e y_e / sum_e w_e over the *other* documents e (leave-one-out: the regression is fitted on the
  test documents' human rationales, as the paper has no separate annotated set), w_e = exp(-(x_e - x_d)^2 / 0.05)
  (the code's RBF kernel, width 0.05 without a factor 2).

Selecting a share p keeps every word scoring >= the score at rank round(p n) (0-based, capped at n - 1), as
the code does: ties at the cut are all kept. The code counts x with ``> 0.1`` when building the regression
data and ``>= 0.1`` when predicting; here both use ``>= 0.1`` (the paper's wording).

The fit uses the human rationales of the documents it binarizes, so plausibility scores with it are somewhat
optimistic for every method (paper 002 pitfall 11); the share of each document is returned for inspection.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SHARE_GRID = np.linspace(0.01, 0.99, 150)
SCORE_THRESHOLD = 0.1
KERNEL_WIDTH = 0.05
NORMALIZATIONS = ("auto", "min-max", "none")


def normalized(scores, how: str = "auto") -> np.ndarray:
    """Per-document min-max to [0, 1]; "auto" leaves scores already in [0, 1] (MaRC's mask) as they are."""
    scores = np.asarray(scores, dtype=np.float64)
    if how not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {', '.join(NORMALIZATIONS)}; got {how!r}")
    if how == "none" or scores.size == 0 or (how == "auto" and scores.min() >= 0 and scores.max() <= 1):
        return scores
    span = scores.max() - scores.min()
    return np.zeros_like(scores) if span == 0 else (scores - scores.min()) / span


def select_share(scores, share: float) -> np.ndarray:
    """The words scoring >= the score at rank round(share * n) (0-based, at most n - 1); ties are kept."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.size == 0:
        return np.zeros(0, dtype=bool)
    ranked = np.sort(scores)[::-1]
    cut = ranked[min(int(np.round(share * scores.size)), scores.size - 1)]
    return scores >= cut


def token_f1(selected, human) -> float:
    """F1 of the selected words against the human words (the code's conventions: 0 without any overlap)."""
    selected, human = np.asarray(selected, dtype=bool), np.asarray(human, dtype=bool)
    tp = int(np.sum(selected & human))
    precision = tp / max(int(selected.sum()), 1)
    recall = tp / max(int(human.sum()), 1)
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def optimal_share(scores, human, grid=SHARE_GRID) -> float:
    """The first share of the grid with the highest F1 (0 when none beats F1 = 0)."""
    best_share, best_f1 = 0.0, 0.0
    for share in grid:
        f1 = token_f1(select_share(scores, share), human)
        if f1 > best_f1:
            best_share, best_f1 = float(share), f1
    return best_share


def share_above(scores, threshold: float = SCORE_THRESHOLD) -> float:
    scores = np.asarray(scores, dtype=np.float64)
    return float(np.mean(scores >= threshold)) if scores.size else 0.0


def leave_one_out_regression(x, y, width: float = KERNEL_WIDTH) -> np.ndarray:
    """Nadaraya-Watson prediction at each x_d from all the other documents (RBF weights exp(-(dx)^2 / width))."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size < 2:
        raise ValueError("The top-p % binarization is fitted leave-one-out and needs at least two documents with "
                         "human rationales.")
    weights = np.exp(-np.square(x[:, None] - x[None, :]) / width)
    np.fill_diagonal(weights, 0.0)
    return weights @ y / weights.sum(axis=1)


@dataclass(frozen=True)
class TopPBinarization:
    selected: list[np.ndarray]  # per document: the words of its binary rationale
    predicted_share: np.ndarray  # p_d, the regression's share per document
    feature: np.ndarray  # x_d, the share of words scoring >= the threshold
    optimal: np.ndarray  # y_d, the F1-optimal share (the regression's targets)


def top_p_binarize(scores: list, humans: list, threshold: float = SCORE_THRESHOLD, width: float = KERNEL_WIDTH,
                   normalization: str = "auto") -> TopPBinarization:
    """Binary rationales of every document: the top p_d share, p_d from the leave-one-out kernel regression."""
    if len(scores) != len(humans):
        raise ValueError(f"{len(scores)} score arrays for {len(humans)} human rationales")
    documents = [normalized(s, normalization) for s in scores]
    for d, (s, h) in enumerate(zip(documents, humans)):
        if len(s) != len(h):
            raise ValueError(f"document {d}: {len(s)} scores for {len(h)} human word labels")
    feature = np.array([share_above(s, threshold) for s in documents])
    optimal = np.array([optimal_share(s, h) for s, h in zip(documents, humans)])
    predicted = leave_one_out_regression(feature, optimal, width)
    selected = [select_share(s, p) for s, p in zip(documents, predicted)]
    return TopPBinarization(selected, predicted, feature, optimal)
