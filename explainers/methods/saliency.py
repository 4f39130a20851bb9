"""Saliency: the gradient of the target output with respect to each token's word embedding.

Reductions of the (tokens x hidden) gradient to one score per token, as the papers use them:
- ``l2``:        ||df/de||_2, unsigned (LIT's "Grad L2 Norm"; paper 001's labelled alternative)
- ``onehot-l2``: ||(df/de) E^T||_2 over the vocabulary, the gradient w.r.t. the one-hot input
                 (paper 001 section 4, Gradient; seeds-000-001.md 001.2)
- ``sum``:       signed sum over hidden dimensions (paper 003 section 2.2.2.1, code)
- ``l1``:        L1 norm (paper 002's "n" reduction, App. A.1)
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from explainers.base import Attribution, Explainer
from explainers.embedding_forward import OUTPUTS
from explainers.params import param
from explainers.registry import register
from explainers.shared_passes import SharedPass, gradient_pass

REDUCTIONS = ("l2", "onehot-l2", "sum", "l1")


def reduce_hidden(gradient: torch.Tensor, reduction: str, embedding_matrix: torch.Tensor | None = None) -> torch.Tensor:
    """(tokens, hidden) -> (tokens,)"""
    if reduction == "l2":
        return gradient.norm(dim=-1)
    if reduction == "l1":
        return gradient.abs().sum(dim=-1)
    if reduction == "sum":
        return gradient.sum(dim=-1)
    if reduction == "onehot-l2":
        if embedding_matrix is None:
            raise ValueError("the onehot-l2 reduction needs the embedding matrix")
        return (gradient @ embedding_matrix.T).norm(dim=-1)
    raise ValueError(f"unknown reduction {reduction}")


VANISHING_SUM = ("The signed sum of the gradient over the hidden units is float noise on this model: a LayerNorm "
                 "right after the embeddings makes every token's input gradient sum to 0 (BERT, RoBERTa, MiniLM). "
                 "The scores rank nothing; use the l2 or l1 reduction (paper 003's code summed).")


def _sums_vanish(gradient: torch.Tensor) -> bool:
    """Every token's signed gradient sum is below float32 noise relative to the gradient's size."""
    norms = gradient.norm(dim=-1)
    return bool(norms.max() > 0 and (gradient.sum(dim=-1).abs() <= 1e-4 * norms.max()).all())


@register
class Saliency(Explainer):
    id = "saliency"
    label = "Saliency (gradient)"
    family = "gradient"
    description = "How much the target output changes for an infinitesimal change of each token's embedding."
    reference = "Simonyan et al. 2014; reductions: paper 001 section 4, paper 003 section 2.2.2.1, paper 002 App. A.1"
    needs_gradients = True

    @dataclass(frozen=True)
    class Params:
        reduction: str = param("l2", "Reduction over the embedding", "How the gradient vector of a token becomes "
                               "one number.", choices=REDUCTIONS)
        output: str = param("logit", "Output differentiated", "The target class's logit (papers 001, 003) or its "
                            "probability.", choices=OUTPUTS)

    presets = {
        "paper-001": {"reduction": "onehot-l2", "output": "logit"},
        "paper-003": {"reduction": "sum", "output": "logit"},
        "paper-002-n": {"reduction": "l1", "output": "probability"},
        # ferret-xai "Gradient": Captum Saliency's default abs=True, summed over the hidden units = L1 of the logit's
        "ferret": {"reduction": "l1", "output": "logit"},
    }

    def is_signed(self) -> bool:
        return self.params.reduction == "sum"

    def estimate_passes(self, encoding):
        return 1, 1

    def shared_pass(self) -> SharedPass:  # every reduction, and input x gradient, from one backward pass
        return SharedPass("gradient", (("output", self.params.output),))

    def attribute(self, classifier, encoding, target):
        _, gradient = gradient_pass(classifier, encoding, target, self.params.output)  # Captum's Saliency
        matrix = classifier.model.get_input_embeddings().weight.detach() if self.params.reduction == "onehot-l2" else None
        scores = reduce_hidden(gradient[0], self.params.reduction, matrix)
        warnings = []
        if self.params.reduction == "sum" and _sums_vanish(gradient[0]):
            warnings.append(VANISHING_SUM)
        return Attribution(token_scores=scores.detach().cpu().numpy(), baseline="none (local gradient)",
                           warnings=warnings)

    @property
    def word_aggregation(self):  # norms combine as a norm, signed sums as a sum
        return "l2" if self.params.reduction in ("l2", "onehot-l2") else "sum"
