"""The removal metrics' random baseline for one input: ``random_baseline`` scores ``n`` (>= 10) seeded random
orderings of the words with the same metrics, options and operator as the methods, in one batched engine call per
operator; ``methods_and_random`` scores the methods' rankings in the same call. Its mean and 95 % band are drawn
on every curve and put in every table; the band, the verdict and the dataset-level comparison are the core's
(``evaluation/baselines.py``), shared with the evaluators that are not removal metrics.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evaluation.baselines import DEFAULT_ORDERINGS, band, inside, orderings_seed
from evaluation.faithfulness.curves import (
    OrderResult,
    RemovalMetric,
    RemovalOptions,
    evaluate_orders,
    random_orders,
    rank_words,
)
from explainers.params import options_from


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
    options = options if isinstance(options, RemovalOptions) else options_from(RemovalOptions, options)
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
