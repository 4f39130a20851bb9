"""The random baseline every faithfulness number is compared with, and the "not distinguishable" flag.

For one input, ``random_baseline`` scores ``n`` (>= 10) seeded random orderings of the words with the same
metrics, options and operator as the methods, in one batched engine call per operator. Its mean and 95 %
band (2.5th-97.5th percentile over the orderings) are drawn on every curve and put in every table; a method
whose value lies inside the band is flagged "not distinguishable from random" (paper 003 s. 4.1.1, Fig. 4.1:
gradients "only slightly outperforming" random; paper 001 always plots Random).

For a dataset, each example stores the orderings' values; the band is the spread of the per-ordering dataset
means, and a method is flagged when the paired bootstrap 95 % CI of (method - random) per example contains 0.

Evaluators that are not removal metrics (plausibility, ...) get the same baseline by scoring explanations
with uniformly random word scores.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import numpy as np

from evaluation.faithfulness.curves import (
    OrderResult,
    RemovalMetric,
    RemovalOptions,
    evaluate_orders,
    random_orders,
    rank_words,
)
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


@dataclass
class RandomBaseline:
    """The random orderings' values and curves for one input."""

    n: int
    seed: int
    values: dict[str, list[float]] = field(default_factory=dict)   # metric id -> one value per ordering
    curves: dict[str, dict] = field(default_factory=dict)          # metric id -> x, per-ordering scores, start

    def mean(self, metric_id: str) -> float:
        return float(np.nanmean(self.values[metric_id]))

    def band(self, metric_id: str) -> tuple[float, float]:
        return band(self.values[metric_id])

    def flag(self, metric_id: str, value: float) -> bool:
        """True when ``value`` is inside the random band (not distinguishable from random)."""
        return inside(value, self.band(metric_id))

    def curve_band(self, metric_id: str) -> dict:
        curve = self.curves[metric_id]
        scores = np.asarray(curve["orderings"], dtype=np.float64)
        return {"x": curve["x"], "mean": scores.mean(axis=0).tolist(),
                "low": np.quantile(scores, 0.025, axis=0).tolist(), "high": np.quantile(scores, 0.975, axis=0).tolist(),
                "start": curve["start"]}

    def to_dict(self) -> dict:
        return {"n": self.n, "seed": self.seed, "values": self.values, "curves": self.curves}


def random_baseline(classifier, encoding, metrics: list[RemovalMetric], options: RemovalOptions | dict | None = None,
                    example=None, explanation=None, n: int = DEFAULT_ORDERINGS, seed: int | None = None,
                    filler_options: dict | None = None) -> RandomBaseline:
    """``n`` random orderings scored with ``metrics`` (one engine call per operator for all of them)."""
    _, baseline = methods_and_random(classifier, encoding, metrics, {}, options, example, explanation, n, seed,
                                     filler_options)
    return baseline


def methods_and_random(classifier, encoding, metrics: list[RemovalMetric], method_scores: dict,
                       options: RemovalOptions | dict | None = None, example=None, explanation=None,
                       n: int = DEFAULT_ORDERINGS, seed: int | None = None, filler_options: dict | None = None
                       ) -> tuple[dict[str, OrderResult], RandomBaseline]:
    """Every method's ranking (``method_scores``: name -> word scores) and ``n`` random orderings, all scored in
    one engine call per operator (identical perturbed inputs across methods are computed once)."""
    options = options if isinstance(options, RemovalOptions) else RemovalOptions.from_dict(options)
    seed = orderings_seed(options.seed if seed is None else seed, encoding.key)
    ranked = [rank_words(scores, options.seed, options.rank_by) for scores in method_scores.values()]
    orders = np.vstack(ranked + [random_orders(encoding.n_words, n, seed)]) if ranked or n else \
        np.zeros((0, encoding.n_words), dtype=int)
    positives = [int(np.sum(np.asarray(s, dtype=np.float64) > 0)) for s in method_scores.values()] + [None] * n
    results = evaluate_orders(classifier, encoding, metrics, orders, options, example, explanation,
                              filler_options, positives=positives) if len(orders) else []
    per_method = dict(zip(method_scores, results[:len(ranked)]))
    shuffled = results[len(ranked):]
    baseline = RandomBaseline(n=n, seed=seed)
    for metric in metrics:
        baseline.values[metric.id] = [r.values[metric.id] for r in shuffled]
        first = shuffled[0].curves[metric.id] if shuffled else None
        baseline.curves[metric.id] = {"x": first.x if first else [], "counts": first.counts if first else [],
                                      "orderings": [r.curves[metric.id].scores for r in shuffled],
                                      "start": first.start if first else float("nan"), "mode": metric.mode,
                                      "score": metric.score}
    return per_method, baseline


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
