"""Shapley value sampling (Castro et al. 2009): average marginal contributions over random word orders.

Captum's ``ShapleyValueSampling`` in word-mask space (``mask_forward``): for each sampled permutation the
words are added one by one to the empty input (all words removed by the chosen operator), and each word is
credited with the score change it causes. ``shapley_sampling_values`` computes what Captum's computes (the
same seeded permutations, its float32 running sum; a test holds them equal) with every permutation's masks
built at once and sent to the perturbation engine in one batch, each distinct one once.
Paper 002 (App. A.1): 25 permutations, removed tokens -> [PAD] (its code uses 15).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.mask_forward import MaskForward, operator_label, operator_param, score_param, word_input
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded


def shapley_sampling_values(forward: MaskForward, n: int, n_samples: int, seed: int) -> np.ndarray:
    """Mean marginal contribution of each word over ``n_samples`` random orders (torch.randperm, as Captum draws
    them). Row j of a permutation keeps its first j + 1 words; the empty input comes first."""
    with seeded(seed):
        orders = np.stack([torch.randperm(n).numpy() for _ in range(n_samples)])
    position = np.argsort(orders, axis=1)  # position[p, w]: where word w comes in order p
    keep = position[:, None, :] <= np.arange(n)[None, :, None]  # (orders, steps, words)
    scores = forward.request(np.vstack([np.zeros((1, n), dtype=bool), keep.reshape(-1, n)]))
    after = scores[1:].reshape(n_samples, n)
    before = np.hstack([np.full((n_samples, 1), scores[0]), after[:, :-1]])
    gains = np.zeros((n_samples, n))
    np.put_along_axis(gains, orders, after - before, axis=1)  # gains[p, w]: what adding word w changed
    total = np.zeros(n, dtype=np.float32)
    for row in gains:  # Captum's running sum is a float32 tensor
        total = (total + row).astype(np.float32)
    return (total / np.float32(n_samples)).astype(np.float64)


@register
class ShapleySampling(Explainer):
    id = "shapley_sampling"
    label = "Shapley value sampling"
    family = "perturbation"
    description = "Each word's average contribution when words are added in random orders (a Monte-Carlo " \
                  "estimate of its Shapley value)."
    reference = "Castro et al. 2009; paper 002 App. A.1 (25 permutations, [PAD])"
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        n_samples: int = param(25, "Permutations", "Random word orders averaged (cost: permutations x words "
                               "forward passes).", min=1, max=2000)
        operator: str = operator_param("pad")
        score: str = score_param("probability")
        seed: int = seed_param("permutations")

    presets = {
        "paper-002": {"n_samples": 25, "operator": "pad", "score": "probability"},
        "paper-002-code": {"n_samples": 15, "operator": "pad", "score": "probability"},
        # paper 002's removal with 2 permutations: the reproduce run's tiny budget (a machinery test, not a result)
        "paper-002-2-permutations": {"n_samples": 2, "operator": "pad", "score": "probability"},
    }

    def estimate_passes(self, encoding):
        return self.params.n_samples * encoding.n_words + 2, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward = MaskForward(classifier, encoding, p.operator, target, p.score)
        scores = shapley_sampling_values(forward, word_input(encoding).shape[1], p.n_samples, p.seed)
        return Attribution(word_scores=scores,
                           baseline=f"words absent = removed by {operator_label(p.operator)}",
                           details={**forward.details(), "permutations": p.n_samples})
