"""eMPRT, the efficient model parameter randomisation test (Hedström et al., "Sanity Checks Revisited", XAI in
Action workshop 2023; Quantus ``EfficientMPRT``), here for text.

Instead of comparing the explanation layer by layer with the original, eMPRT reads two model states only, the
original and the fully randomized model, and reports the relative rise in explanation complexity:
(H(e_random) - H(e_original)) / H(e_original). A method that depends on the model should spread its importance
when the model is destroyed: higher is better; about 0 means the explanation kept its shape.

Complexity here is ``evaluation.agreement.measures.complexity``: the entropy of |a| / sum |a| over the words (Quantus
histograms the attribution values into bins, which suits images of thousands of pixels, not 20-word sentences).
Its normalization by log n cancels in the ratio, so the value is the same as with the raw entropy. NaN when the
original explanation has zero complexity (all importance on one word) or no importance at all.

The random band (``chance_rise``): the rise an explanation would show if randomization left pure noise, i.e. from
the original map to uniform random scores on the same words (the random baseline method's map): a method reaching it
lost all its structure; one far below kept it.
"""
from __future__ import annotations

import math

import numpy as np

from evaluation.agreement.measures import complexity
from evaluation.metric import Metric, register_metric

REFERENCE = ("Hedström et al. 2023, Sanity Checks Revisited (eMPRT); Quantus efficient_mprt.py; complexity = "
             "entropy of |a| over words instead of a histogram")
METRIC = register_metric(Metric(
    "sanity_emprt", "eMPRT: relative rise in complexity", "sanity", True, (-1.0, None),
    "(complexity after full randomization - complexity on the original model) / complexity on the original model; "
    "higher: the explanation loses its structure with the model.", REFERENCE))


def relative_complexity_rise(original_scores, randomized_scores) -> float:
    before, after = complexity(original_scores), complexity(randomized_scores)
    if not (math.isfinite(before) and math.isfinite(after)) or before <= 0:
        return float("nan")
    return (after - before) / before


def emprt(result) -> dict[str, float]:
    """eMPRT per method from a cascading ``SanityResult`` (``evaluation.sanity.one_input.run_sanity``) whose last
    stage randomized every unit."""
    if result.mode != "cascading" or not result.complete:
        raise ValueError("eMPRT needs a complete cascading randomization (the fully randomized model is its last "
                         "stage): run the check with mode 'cascading' to the end.")
    original, last = result.stages[0], result.stages[-1]
    return {method: relative_complexity_rise(original.explanations[method].word_scores,
                                             last.explanations[method].word_scores)
            for method in result.methods if method in original.explanations and method in last.explanations}


def chance_rise(original_scores, rng: np.random.Generator, draws: int = 100) -> np.ndarray:
    """eMPRT of ``original_scores`` against ``draws`` maps of uniform random scores in [-1, 1] on the same words."""
    n = len(original_scores)
    if n < 2 or draws < 1:
        return np.full(max(draws, 0), np.nan)
    return np.array([relative_complexity_rise(original_scores, rng.uniform(-1.0, 1.0, n)) for _ in range(draws)])


def band(values) -> dict[str, float]:
    """mean and the 2.5 / 97.5 % quantiles of the finite values (NaN when none)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    if not values.size:
        return {"mean": float("nan"), "low": float("nan"), "high": float("nan")}
    return {"mean": float(values.mean()), "low": float(np.quantile(values, 0.025)),
            "high": float(np.quantile(values, 0.975))}


def emprt_chance(result, draws: int = 200) -> dict[str, float]:
    """The random band of eMPRT for one ``SanityResult``, pooled over its methods' original maps."""
    rng = np.random.default_rng(result.seed)
    parts = [chance_rise(e.word_scores, rng, draws) for e in result.stages[0].explanations.values()]
    return band(np.concatenate(parts) if parts else [])
