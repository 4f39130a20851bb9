"""Agreement between explanation methods on one input: rank correlation of word scores, top-k words, the
disagreement measures of Krishna et al., and the shape of each explanation (complexity, sparseness).

Spearman's rho and Kendall's tau-b between every pair of methods' word scores, on |score| by default
(methods differ in sign conventions: a signed and an unsigned method can only be compared by magnitude) or
on the signed scores; NaN where a method's scores are constant. Both are computed for all pairs at once as
cosines: rho between centered average ranks, tau-b between the signs of all pairwise differences (the same
values as ``evaluation.statistics.spearman`` / ``kendall``, i.e. scipy, without a call per pair).

Pearson's r is the cosine between centered scores. The disagreement measures of Krishna et al. ("The Disagreement
Problem in Explainable Machine Learning", arXiv 2202.01602, s. 3.1) compare the top-k words of two methods
(top-k by |score| with "Compare magnitudes", by signed score otherwise; ties in reading order), each a share of k:
feature agreement (words in both top-k), rank agreement (the same word at the same rank), sign agreement (in both
top-k with the same sign of the raw score), signed rank agreement (same rank and same sign); pairwise rank
agreement is the share of all word pairs that both methods order the same way (sign of the score difference,
a tie matches only a tie). Every measure is also a metric group for dataset runs (evaluator ``agreement`` in
``evaluation/agreement/dataset.py``: a pair table with intervals and a random band, ``cli.py evaluate --metrics
agreement``).

Shape of one explanation, on |score| (``shape_table``): complexity = entropy of |a| / sum |a| divided by log n
(0 = all importance on one word, 1 = uniform; Bhatt et al. 2020 as in EvalxNLP / Quantus, normalized here so
inputs of different lengths compare); sparseness = Gini index of |a| (Chalasani et al. 2020, Quantus
``Sparseness``: 0 = uniform, (n-1)/n = one word); top-k share = sum of the k largest |a| / sum |a| (paper 001
App. E, Fig. 5 "top-k sparsity"). NaN where every score is 0. The three are also a metric group (evaluator
``shape``: ``cli.py evaluate --metrics shape``, dataset runs with intervals and the random band, export), with the
top-10 share of paper 001's Fig. 5.

Caveat (paper 001 section 2.1): agreement between importance measures is not evidence of faithfulness;
two methods can agree and both be wrong. Use the faithfulness metrics for that.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation.metric import Evaluator, Metric, MetricValues, register_evaluator
from explainers import Explanation

CAVEAT = ("Agreement is not faithfulness: methods can agree with each other and all be wrong about what the model "
          "uses (paper 001, section 2.1). Judge faithfulness with the faithfulness metrics.")


MEASURES = {"spearman": ("Spearman's rho", "Pearson correlation of the (average) ranks"),
            "kendall": ("Kendall's tau-b", "concordant minus discordant pairs, tie-corrected"),
            "pearson": ("Pearson's r", "linear correlation of the scores"),
            "feature": ("Feature agreement @k", "share of the top-k words in both methods' top-k (Krishna et al.)"),
            "rank": ("Rank agreement @k", "share of top-k ranks holding the same word in both (Krishna et al.)"),
            "sign": ("Sign agreement @k", "share of k: words in both top-k with the same sign (Krishna et al.)"),
            "signed-rank": ("Signed rank agreement @k", "share of k: same word at the same rank with the same sign "
                            "(Krishna et al.)"),
            "pairwise-rank": ("Pairwise rank agreement", "share of word pairs both methods order the same way "
                              "(Krishna et al.)")}
CORRELATIONS = ("spearman", "kendall", "pearson")  # range [-1, 1]; the others are shares in [0, 1]
TOP_K = ("feature", "rank", "sign", "signed-rank")
DEFAULT_K = 5
SHAPES = {"complexity": ("Complexity", "entropy of |a| normalized by log n: 0 = one word, 1 = uniform (lower: "
                                       "concentrated)"),
          "gini": ("Sparseness (Gini)", "Gini index of |a|: 0 = uniform, (n-1)/n = one word (higher: sparse)"),
          "top-k-share": ("Top-k share", "share of sum |a| in the k largest |a| (paper 001 App. E)")}


def spearman_features(vectors: np.ndarray) -> np.ndarray:
    """Centered average ranks: Spearman's rho is the cosine between two of these."""
    from scipy.stats import rankdata  # lazy: scipy.stats costs ~0.8 s at import
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


def top_k_indices(key: np.ndarray, k: int) -> np.ndarray:
    """The k words with the largest ``key``, best first; ties keep reading order."""
    return np.argsort(-np.asarray(key, dtype=np.float64), kind="stable")[:k]


def top_k_agreement(a: np.ndarray, b: np.ndarray, signs_a: np.ndarray, signs_b: np.ndarray, k: int,
                    measure: str) -> float:
    """One of Krishna et al.'s top-k measures for rankings keys ``a``, ``b`` and raw-score signs."""
    top_a, top_b = top_k_indices(a, k), top_k_indices(b, k)
    if measure == "feature":
        hits = len(set(top_a) & set(top_b))
    elif measure == "rank":
        hits = int((top_a == top_b).sum())
    elif measure == "sign":
        hits = sum(1 for w in set(top_a) & set(top_b) if signs_a[w] == signs_b[w])
    elif measure == "signed-rank":
        hits = int(((top_a == top_b) & (signs_a[top_a] == signs_b[top_b])).sum())
    else:
        raise ValueError(f"unknown top-k measure {measure!r}")
    return hits / k


def pairwise_rank_agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Share of word pairs i < j ordered the same way by both (a tie matches only a tie); NaN under 2 words."""
    features = kendall_features(np.vstack([a, b]))
    return float((features[0] == features[1]).mean()) if features.shape[1] else float("nan")


def _pairwise(vectors: np.ndarray, signs: np.ndarray, measure: str, k: int) -> np.ndarray:
    n = len(vectors)
    matrix = np.ones((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            value = pairwise_rank_agreement(vectors[i], vectors[j]) if measure == "pairwise-rank" else \
                top_k_agreement(vectors[i], vectors[j], signs[i], signs[j], k, measure)
            matrix[i, j] = matrix[j, i] = value
    return matrix


def agreement_matrix(explanations: Sequence[Explanation], measure: str = "spearman",
                     absolute: bool = True, k: int = DEFAULT_K) -> Agreement:
    """Pairwise agreement of the methods' word scores (all explanations of the same input); ``k`` for the top-k
    measures (capped at the number of words)."""
    if measure not in MEASURES:
        raise ValueError(f"Unknown agreement measure '{measure}'; choose one of {', '.join(MEASURES)}.")
    explanations = list(explanations)
    if len({e.words for e in explanations}) > 1:
        raise ValueError("Agreement needs explanations of the same input (the word lists differ).")
    vectors = np.array([comparable_scores(e, absolute) for e in explanations]).reshape(len(explanations), -1)
    if measure == "spearman":
        matrix = cosine_matrix(spearman_features(vectors))
    elif measure == "kendall":
        matrix = cosine_matrix(kendall_features(vectors))
    elif measure == "pearson":
        matrix = cosine_matrix(vectors - vectors.mean(axis=1, keepdims=True))
    else:
        signs = np.sign(np.array([comparable_scores(e, False) for e in explanations]).reshape(vectors.shape))
        matrix = _pairwise(vectors, signs, measure, max(1, min(int(k), vectors.shape[1])))
    return Agreement(tuple(e.method_id for e in explanations), tuple(e.method_label for e in explanations),
                     measure, absolute, matrix)


# ----- the shape of one explanation ---------------------------------------------------------------------
def _importance_share(scores) -> np.ndarray | None:
    magnitude = np.abs(np.asarray(scores, dtype=np.float64))
    total = magnitude.sum()
    return magnitude / total if total > 0 else None


def complexity(scores) -> float:
    """Entropy of |a| / sum |a| over log n (0 with one word); NaN when every score is 0."""
    share = _importance_share(scores)
    if share is None:
        return float("nan")
    if len(share) < 2:
        return 0.0
    nonzero = share[share > 0]
    return float(-(nonzero * np.log(nonzero)).sum() / np.log(len(share)))


def gini(scores) -> float:
    """Gini index of |a| (Chalasani et al. 2020): sum_i (2i - n - 1) |a|_(i) / (n sum |a|), ascending order."""
    magnitude = np.sort(np.abs(np.asarray(scores, dtype=np.float64)))
    n, total = len(magnitude), magnitude.sum()
    if total <= 0:
        return float("nan")
    return float(((2 * np.arange(1, n + 1) - n - 1) * magnitude).sum() / (n * total))


def top_k_share(scores, k: int = DEFAULT_K) -> float:
    """Share of sum |a| held by the k largest |a| (paper 001 App. E)."""
    share = _importance_share(scores)
    return float("nan") if share is None else float(np.sort(share)[::-1][:k].sum())


def shape_table(explanations: Sequence[Explanation], k: int = DEFAULT_K) -> list[dict]:
    """One row per method: complexity, sparseness (Gini) and the top-k share of its word scores."""
    return [{"method": e.method_label, "complexity": complexity(e.word_scores), "gini": gini(e.word_scores),
             "top-k-share": top_k_share(e.word_scores, k), "k": k} for e in explanations]


# ----- the shape measures as a metric group (dataset runs, --list-metrics, export) ---------------------------------
SHAPE_TOP_K = 10  # paper 001 App. E, Fig. 5: "the sparsity considering the top-10 tokens"
SHAPE_REFERENCE = ("complexity: Bhatt et al. 2020 (Quantus Complexity), normalized by log n; Gini: Chalasani et al. "
                   "2020 (Quantus Sparseness); top-10 share: paper 001 App. E, Fig. 5")


def compute_shape(classifier, encoding, explanation, example, options) -> MetricValues:
    """Complexity, Gini and top-10 share of one explanation's word scores (no forward pass); a value that is
    undefined (every score 0) is left out rather than stored as NaN."""
    scores = explanation.word_scores
    values = {"shape-complexity": complexity(scores), "shape-gini": gini(scores),
              "shape-top-10-share": top_k_share(scores, SHAPE_TOP_K)}
    return MetricValues({k: v for k, v in values.items() if np.isfinite(v)})


_SHAPE_COMMON: dict[str, Any] = dict(family="sanity", range=(0.0, 1.0), reference=SHAPE_REFERENCE, params={"data_property": False})
SHAPE = register_evaluator(Evaluator(
    id="shape", label="Shape of an explanation: complexity (entropy), sparseness (Gini), top-10 share",
    metrics=(Metric(id="shape-complexity", label="Complexity (normalized entropy of |a|)", higher_is_better=False,
                    description="Entropy of |a_i| / sum |a| divided by log n: 0 = all importance on one word, 1 = "
                                "uniform. A description of the map (concise maps are easier to read), not a "
                                "faithfulness score.", **_SHAPE_COMMON),
             Metric(id="shape-gini", label="Sparseness (Gini index of |a|)", higher_is_better=True,
                    description="Gini index of |a|: 0 = uniform, (n-1)/n = one word. A description of the map, not a "
                                "faithfulness score.", **_SHAPE_COMMON),
             Metric(id="shape-top-10-share", label="Top-10 share of |a|", higher_is_better=True,
                    description="Share of sum |a| held by the 10 largest |a| (paper 001 App. E: is the importance on "
                                "a few words?); 1 for inputs of 10 words or fewer.", **_SHAPE_COMMON)),
    compute=compute_shape))


def agreement_report(explanations: Sequence[Explanation], absolute: bool = True, k: int = DEFAULT_K) -> dict:
    """Every agreement measure and every shape measure, for export."""
    explanations = list(explanations)
    if len(explanations) < 2:
        matrices = {}
    else:
        matrices = {m: agreement_matrix(explanations, m, absolute, k).to_rows() for m in MEASURES}
    return {"absolute": absolute, "k": k, "measures": {m: {"label": label, "meaning": meaning}
                                                        for m, (label, meaning) in {**MEASURES, **SHAPES}.items()},
            "agreement": matrices, "shape": shape_table(explanations, k), "caveat": CAVEAT,
            "reference": "Krishna et al., arXiv 2202.01602; complexity / Gini after Bhatt et al. 2020 and "
                         "Chalasani et al. 2020; top-k share: paper 001 App. E"}


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
