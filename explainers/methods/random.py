"""A seeded random explanation: the floor every method and metric is compared against.

``permutation`` draws a random ranking of the words (paper 003 section 4: a random permutation of 1..|x|,
used as scores); ``uniform`` draws U(0, 1) scores; ``normal`` draws signed N(0, 1) scores. Paper 001 (section
5) and paper 000 (Table 2c) report a random baseline next to every method.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution, Explainer
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param

DISTRIBUTIONS = ("permutation", "uniform", "normal")


@register
class RandomBaseline(Explainer):
    id = "random"
    contrast_support = "no-class"  # random scores read no class
    label = "Random (baseline)"
    family = "baseline"
    description = "Random word scores from a seeded generator; any method should do clearly better."
    reference = "paper 003 section 4 (random permutation); paper 001 section 5; paper 000 Table 2c"
    stochastic = True

    @dataclass(frozen=True)
    class Params:
        distribution: str = param("permutation", "Distribution", "permutation: a random ranking 1..n as scores "
                                  "(paper 003); uniform: U(0, 1); normal: signed N(0, 1).", choices=DISTRIBUTIONS)
        seed: int = seed_param("scores")

    def is_signed(self) -> bool:
        return self.params.distribution == "normal"

    def estimate_passes(self, encoding):
        return 1, 0

    def attribute(self, classifier, encoding, target):
        rng = np.random.default_rng(self.params.seed)
        n = encoding.n_words
        if self.params.distribution == "permutation":
            scores = (rng.permutation(n) + 1).astype(np.float64)
        elif self.params.distribution == "uniform":
            scores = rng.random(n)
        else:
            scores = rng.standard_normal(n)
        return Attribution(word_scores=scores, baseline="n/a (random)",
                           details={"generator": "numpy default_rng (PCG64)"})
