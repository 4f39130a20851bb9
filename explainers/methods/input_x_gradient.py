"""Input x Gradient: each token's word embedding dotted with the gradient of the target output.

Signed sum over hidden dimensions (paper 003 section 2.2.2.1). Paper 001's text (section 4) takes the one
non-zero element of x (one-hot) times the gradient, "This non-zero is considered as the explanation": the same
signed dot product (preset ``paper-001``). Its reference code returns the absolute value (seeds-000-001.md 001.2,
a [code] note, not a sentence of the paper): preset ``paper-001-code``, ``absolute`` = True. Paper 002's
"InXGrad_n" (App. A.1) reduces the embedding dimension by the L1 norm instead: preset ``l1-norm``
(``reduction="l1"``); its target, the gold label, is the page's or ``--target gold`` (``evaluation/suite/paper_targets.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers.base import Attribution, Explainer
from explainers.embedding_forward import OUTPUTS, REDUCTIONS, reduce_dimensions
from explainers.params import param
from explainers.registry import register
from explainers.shared_passes import SharedPass, gradient_pass


@register
class InputXGradient(Explainer):
    id = "input_x_gradient"
    label = "Input x Gradient"
    family = "gradient"
    description = "Embedding times gradient, summed over the hidden dimensions: a first-order estimate of each " \
                  "token's contribution."
    reference = "Shrikumar et al. 2016; paper 001 section 4; paper 003 section 2.2.2.1"
    needs_gradients = True

    @dataclass(frozen=True)
    class Params:
        absolute: bool = param(False, "Absolute value", "Return |score| as paper 001's code does (its text is signed).")
        output: str = param("logit", "Output differentiated", choices=OUTPUTS)
        reduction: str = param("sum", "Over the embedding dimension", "sum: signed sum (Captum); l1: L1 norm of the "
                               "per-dimension scores (paper 002's _n rows; unsigned).", choices=REDUCTIONS)

    presets = {"paper-003": {"absolute": False, "output": "logit"}, "paper-001": {"absolute": False, "output": "logit"},
               "paper-001-code": {"absolute": True, "output": "logit"},
               "ferret": {"absolute": False, "output": "logit"},  # ferret-xai "Gradient (x Input)"
               "l1-norm": {"absolute": False, "output": "logit", "reduction": "l1"}}  # paper 002's InXGrad_n

    def is_signed(self) -> bool:
        return not self.params.absolute and self.params.reduction == "sum"

    def estimate_passes(self, encoding):
        return 1, 1

    def shared_pass(self) -> SharedPass:  # the same backward pass as saliency's
        return SharedPass("gradient", (("output", self.params.output),))

    def attribute(self, classifier, encoding, target):
        embeddings, gradient = gradient_pass(classifier, encoding, target, self.params.output)
        scores = reduce_dimensions((embeddings * gradient)[0], self.params.reduction)  # Captum: input * gradient
        if self.params.absolute:
            scores = scores.abs()
        return Attribution(token_scores=scores.detach().cpu().numpy(), baseline="none (local gradient)")
