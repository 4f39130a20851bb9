"""Shapley value sampling (Castro et al. 2009): average marginal contributions over random word orders.

Captum's ``ShapleyValueSampling`` in word-mask space (``mask_forward``): for each sampled permutation the
words are added one by one to the empty input (all words removed by the chosen operator), and each word is
credited with the score change it causes. Captum evaluates one permutation per forward call, so the masks of
every permutation are recorded first (same seed) and sent to the perturbation engine in one batch.
Paper 002 (App. A.1): 25 permutations, removed tokens -> [PAD] (its code uses 15).
"""
from __future__ import annotations

from dataclasses import dataclass

from captum.attr import ShapleyValueSampling as CaptumShapleyValueSampling


from explainers.base import Attribution, Explainer
from explainers.mask_forward import operator_param, score_param, MaskForward, operator_label, run_prefetched, word_input
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param, seeded


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
    }

    def estimate_passes(self, encoding):
        return self.params.n_samples * encoding.n_words + 2, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        inputs = word_input(encoding)
        batch = encoding.n_words

        def run(forward):
            with seeded(p.seed):
                return CaptumShapleyValueSampling(forward).attribute(inputs, baselines=0.0, n_samples=p.n_samples,
                                                                     perturbations_per_eval=batch)

        forward = MaskForward(classifier, encoding, p.operator, target, p.score)
        scores = run_prefetched(run, forward)  # Captum asks one permutation at a time; the engine gets one batch
        return Attribution(word_scores=scores[0].double().numpy(),
                           baseline=f"words absent = removed by {operator_label(p.operator)}",
                           details={**forward.details(), "permutations": p.n_samples})
