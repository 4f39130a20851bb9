"""Sparsity curves of importance (paper 001 App. E, Figs. 5-6; seeds-000-001.md 001 (e)).

Top-k sparsity: S(k) = sum of the k largest |a_i| / sum |a_i|, k = 1 .. 10 (Fig. 5). Top-x % sparsity: the same
with k = ceil(x % of the words) (Fig. 6). A curve that rises fast means the importance sits on a few words; the
paper uses the curves to justify masking a relative number of tokens and to compare measures. Over a dataset each
point is the mean over examples with a 95 % bootstrap interval (the paper averages 5 seeds; here examples vary).
An explanation whose scores are all 0 has no curve (left out).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from corpora import Example
from evaluation.statistics import bootstrap_ci
from explainers import create_from_spec
from explainers.cache import explain_cached
from models import TextClassifier

KS = tuple(range(1, 11))  # Fig. 5
PERCENTS = tuple(range(0, 101, 10))  # Fig. 6
TOP_K, TOP_X = "top-k", "top-x%"
SOURCE = "paper 001 App. E, Figs. 5-6 (cumulative importance share against top-k tokens and top-x %)"


def _sorted_share(scores) -> np.ndarray | None:
    magnitude = np.abs(np.asarray(scores, dtype=np.float64))
    magnitude = magnitude[np.isfinite(magnitude)]
    total = magnitude.sum()
    return None if total <= 0 else np.sort(magnitude)[::-1] / total


def top_k_curve(scores, ks: Sequence[int] = KS) -> np.ndarray:
    """S(k) for each k (1 beyond the input's length); NaN everywhere when every score is 0."""
    share = _sorted_share(scores)
    if share is None:
        return np.full(len(ks), np.nan)
    cumulative = np.concatenate([[0.0], np.cumsum(share)])
    return np.array([cumulative[min(k, share.size)] for k in ks])


def top_x_curve(scores, percents: Sequence[float] = PERCENTS) -> np.ndarray:
    """S(ceil(x % of n)) for each x."""
    n = int(np.isfinite(np.asarray(scores, dtype=np.float64)).sum())
    return top_k_curve(scores, [math.ceil(x / 100 * n - 1e-9) for x in percents])


def curve_rows(method: str, word_scores: Sequence[np.ndarray], resamples: int = 2000) -> list[dict]:
    """Mean curve of several explanations of one method with 95 % bootstrap CIs, one row per point."""
    rows = []
    for axis, points, curve in ((TOP_K, KS, top_k_curve), (TOP_X, PERCENTS, top_x_curve)):
        values = np.array([curve(scores) for scores in word_scores]).reshape(len(word_scores), len(points))
        for column, x in enumerate(points):
            estimate = bootstrap_ci(values[:, column], resamples=resamples)
            rows.append({"method": method, "axis": axis, "x": x, "mean": estimate.mean, "low": estimate.low,
                         "high": estimate.high, "n": estimate.n})
    return rows


def sparsity_frame(explanations: Mapping[str, Sequence[np.ndarray]], resamples: int = 2000) -> pd.DataFrame:
    """``{method: [word scores of each example]}`` -> the curves of every method (long format)."""
    rows = [row for method, scores in explanations.items() for row in curve_rows(method, scores, resamples)]
    return pd.DataFrame(rows, columns=["method", "axis", "x", "mean", "low", "high", "n"])


def dataset_sparsity(classifier: TextClassifier, examples: list[Example], methods: list[str],
                     progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Each method's explanations of every example (predicted class, through the explanation cache) -> curves."""
    explainers = {spec: create_from_spec(spec) for spec in methods}
    scores: dict[str, list[np.ndarray]] = {spec: [] for spec in methods}
    for done, example in enumerate(examples, start=1):
        encoding = classifier.encode(example.text, example.pair)
        for spec, explainer in explainers.items():
            scores[spec].append(explain_cached(explainer, classifier, encoding).word_scores)
        if progress:
            progress(done, len(examples))
    return sparsity_frame(scores)
