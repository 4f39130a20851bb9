"""The random baseline's statistics, shared by every family and the dataset runner: the seed of an input's
random orderings, the 95 % band and the "not distinguishable from random" verdict, an explanation with random
word scores for evaluators that read scores (any evaluator's random values), and the dataset-level paired
comparison with random.

A method is flagged "not distinguishable from random" when its value lies inside the random band (one input,
paper 003 s. 4.1.1, Fig. 4.1: gradients "only slightly outperforming" random; paper 001 always plots Random) or
when the paired bootstrap 95 % CI of (method - random) per example contains 0 (a dataset). The removal metrics'
random orderings themselves are scored by the curve engine (``faithfulness/random_band.py``).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from evaluation.metric import RANDOM_METHOD
from evaluation.statistics import Estimate, bootstrap_ci
from explainers import Explanation

DEFAULT_ORDERINGS = 10
MIN_ORDERINGS = 10
NOT_DISTINGUISHABLE = "not distinguishable from random"


def orderings_seed(seed: int, encoding_key: str) -> int:
    """A seed per (run seed, input): the same input gets the same orderings in the app and the CLI."""
    digest = hashlib.sha256(f"{int(seed)}:{encoding_key}".encode()).hexdigest()
    return int(digest[:12], 16)


def band(values, confidence: float = 0.95) -> tuple[float, float]:
    """Central percentile interval of the orderings' values (2.5 %, 97.5 % for 95 %)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan")
    alpha = (1 - confidence) / 2
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1 - alpha))


def inside(value: float, interval: tuple[float, float]) -> bool:
    low, high = interval
    return bool(np.isfinite(value) and low <= value <= high)


def random_explanation(encoding, target: int, target_label: str, scores: np.ndarray, ordering: int,
                       seed: int) -> Explanation:
    """An Explanation with random word scores, for evaluators that read scores rather than rankings."""
    return Explanation(method_id=RANDOM_METHOD, method_label="Random baseline", family="baseline", signed=False,
                       tokens=encoding.tokens, token_word=encoding.token_word, words=encoding.words,
                       word_segment=encoding.word_segment, word_scores=np.asarray(scores, dtype=np.float64),
                       token_scores=None, target=target, target_label=target_label,
                       provenance={"method": RANDOM_METHOD, "ordering": ordering, "seed": seed})


def generic_random_values(evaluator, classifier, encoding, example, options: dict, target: int, n: int,
                          seed: int) -> dict[str, list[float]]:
    """Any evaluator's values for ``n`` explanations with uniform random scores (one call per ordering)."""
    rng = np.random.default_rng(orderings_seed(seed, encoding.key))
    values: dict[str, list[float]] = {}
    for ordering in range(n):
        pseudo = random_explanation(encoding, target, classifier.labels[target], rng.random(encoding.n_words),
                                    ordering, seed)
        for metric_id, value in evaluator.compute(classifier, encoding, pseudo, example, options).items():
            values.setdefault(metric_id, []).append(float(value))
    return values


# ----- dataset level ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RandomComparison:
    """A method against the random baseline on a dataset."""

    random: Estimate            # mean of the per-example random means, bootstrap CI over examples
    band: tuple[float, float]   # spread of the per-ordering dataset means (2.5 %, 97.5 %)
    difference: Estimate        # paired (method - random mean) per example, bootstrap CI
    distinguishable: bool
    verdict: str                # "better than random" | "worse than random" | NOT_DISTINGUISHABLE


def compare_with_random(method_values, random_means, random_orderings=None, higher_is_better: bool = True,
                        seed: int = 0) -> RandomComparison:
    """Paired comparison over the examples both have (arrays aligned by example).

    ``random_orderings``: (examples, orderings) values, for the band of per-ordering dataset means.
    With a single example the flag falls back to "inside the orderings' band".
    """
    method_values = np.asarray(method_values, dtype=np.float64)
    random_means = np.asarray(random_means, dtype=np.float64)
    ok = np.isfinite(method_values) & np.isfinite(random_means)
    difference = bootstrap_ci(method_values[ok] - random_means[ok], seed=seed)
    random_estimate = bootstrap_ci(random_means[ok], seed=seed)
    if random_orderings is not None and len(random_orderings):
        per_ordering = np.nanmean(np.asarray(random_orderings, dtype=np.float64)[ok], axis=0)
        spread = band(per_ordering)
    else:
        spread = (random_estimate.low, random_estimate.high)
    if difference.n >= 2:
        distinguishable = not (difference.low <= 0.0 <= difference.high)
    else:
        distinguishable = not inside(float(np.nanmean(method_values[ok])) if ok.any() else float("nan"), spread)
    if not distinguishable:
        verdict = NOT_DISTINGUISHABLE
    else:
        better = difference.mean > 0 if higher_is_better else difference.mean < 0
        verdict = "better than random" if better else "worse than random"
    return RandomComparison(random_estimate, spread, difference, distinguishable, verdict)
