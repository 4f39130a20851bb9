"""KernelSHAP (Lundberg & Lee 2017): a linear model fitted with the Shapley kernel, whose coefficients
approximate Shapley values.

Captum's ``KernelShap`` in word-mask space (``mask_forward``): coalitions of words are sampled with
p(k) ~ (n - 1) / (k (n - k)) (Captum also adds the full and the empty input with a large weight), absent
words are removed by the shared perturbation engine. Paper 003 (section 2.2.2.2 and its code): 200 samples,
tokens replaced by [MASK], the target's logit explained.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from captum.attr import KernelShap as CaptumKernelShap


from explainers.base import Attribution, Explainer
from explainers.mask_forward import operator_param, score_param, MaskForward, operator_label, word_input
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded


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
        with seeded(p.seed):
            scores = CaptumKernelShap(forward).attribute(word_input(encoding), baselines=0.0, n_samples=p.n_samples,
                                                         perturbations_per_eval=p.n_samples)
        return Attribution(word_scores=scores[0].double().numpy(), baseline=baseline,
                           details={**forward.details(), "samples": p.n_samples})
