"""KernelSHAP (Lundberg & Lee 2017): a linear model fitted with the Shapley kernel, whose coefficients
approximate Shapley values.

Captum's ``KernelShap`` in word-mask space (``mask_forward``): coalitions of words are sampled with
p(k) ~ (n - 1) / (k (n - k)) (Captum also adds the full and the empty input with a large weight), absent
words are removed by the shared perturbation engine. ``kernel_shap_values`` computes what Captum's
``KernelShap`` computes (same seeded draws, weights and least-squares fit; a test holds them equal) on the
whole coalition matrix at once, so the only per-coalition work left is the model's forward.
Paper 003 (section 2.2.2.2 and its code): 200 samples, tokens replaced by [MASK], the target's logit explained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.mask_forward import MaskForward, operator_label, operator_param, score_param, word_input
from explainers.methods.lime import fit_surrogate
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded

ENDPOINT_WEIGHT = 1e6  # Captum's weight of the full and the empty coalition (in theory infinite)


def draw_coalitions(n_samples: int, n: int) -> np.ndarray:
    """Captum's KernelSHAP coalitions as a (n_samples, n) keep-matrix: the full and the empty coalition, then per
    sample a size k ~ (n - 1) / (k (n - k)) and the k words with the largest of n normal draws. The torch draws of
    Captum's per-sample generator (one multinomial and one randn per sample, in that order) keep the seeded
    stream; the k-th largest of each row is then read from one sort of all rows."""
    sizes = torch.arange(n, dtype=torch.float)
    probs = torch.tensor(n - 1) / (sizes * (n - sizes))
    probs[0] = 0.0
    probs = (probs / probs.sum()).reshape(1, -1)  # Categorical(probs).sample() draws from the normalized row
    sizes_drawn, draws = [torch.zeros((0, 1), dtype=torch.long)], [torch.zeros(0, n)]
    for _ in range(n_samples - 2):
        sizes_drawn.append(torch.multinomial(probs, 1, True))
        draws.append(torch.randn(1, n))
    selected, normals = torch.cat(sizes_drawn), torch.cat(draws)
    threshold = normals.sort(dim=1).values.gather(1, n - selected - 1)  # kthvalue(n - k) of each row
    keep = np.ones((2 + len(normals), n), dtype=bool)
    keep[1] = False
    keep[2:] = (normals > threshold).numpy()
    return keep[:n_samples]


def kernel_shap_values(forward: MaskForward, n: int, n_samples: int, seed: int) -> np.ndarray:
    """Captum's KernelSHAP on the whole coalition matrix at once: a linear regression of the scores on the
    coalitions, weight 1e6 for the full and the empty one, 1 for the others (their sampling is the kernel)."""
    with seeded(seed):
        keep = draw_coalitions(n_samples, n)
    size = keep.sum(axis=1)
    weights = np.where((size == 0) | (size == n), ENDPOINT_WEIGHT, 1.0)
    return fit_surrogate("linear", 0.0, keep, forward.request(keep), weights)


@register
class KernelShap(Explainer):
    id = "kernel_shap"
    label = "KernelSHAP"
    family = "perturbation"
    description = "A linear model fitted with the Shapley kernel to the scores of random word coalitions; " \
                  "approximates each word's Shapley value."
    reference = "Lundberg & Lee 2017; paper 003 section 2.2.2.2 (200 samples, [MASK])"
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        n_samples: int = param(200, "Samples", "Coalitions of words evaluated (the first two are the full and "
                               "the empty input).", min=10, max=20000)
        operator: str = operator_param("mask")
        score: str = score_param("logit")
        seed: int = seed_param("coalitions")

    presets = {"paper-003": {"n_samples": 200, "operator": "mask", "score": "logit"}}

    def estimate_passes(self, encoding):
        return self.params.n_samples + 1, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        forward = MaskForward(classifier, encoding, p.operator, target, p.score)
        baseline = f"words absent = removed by {operator_label(p.operator)}"
        if encoding.n_words == 1:  # one player: its Shapley value is f(x) - f(empty), exactly
            values = forward.scores(np.array([[True], [False]]))
            return Attribution(word_scores=np.array([values[0] - values[1]]), baseline=baseline,
                               details={**forward.details(), "samples": 2, "exact": True})
        scores = kernel_shap_values(forward, word_input(encoding).shape[1], p.n_samples, p.seed)
        return Attribution(word_scores=scores, baseline=baseline,
                           details={**forward.details(), "samples": p.n_samples})
