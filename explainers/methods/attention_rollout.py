"""Attention rollout: attention weights multiplied through the layers (Abnar & Zuidema 2020).

Per layer, the attention matrix averaged over heads A_l (rows = queries, each row sums to 1) is multiplied
from the first layer to the last: R = A_{L-1} ... A_1 A_0. Two variants:
- ``plain``: the product as paper 003 implements it (section 2.2.2.3; no residual term, no re-normalisation);
- ``residual``: Abnar & Zuidema's 0.5 A + 0.5 I per layer (the residual connection).
Each word's score is then a column of R read by the classifier's summary token (its row) or averaged over
all queries (paper 003's column mean). Rows of R sum to 1 in both variants.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution, Explainer
from explainers.methods.attention import QUERIES, head_mean_attention, query_scores
from explainers.params import param
from explainers.registry import register

VARIANTS = ("plain", "residual")


def rollout(attention: np.ndarray, residual: bool = False) -> np.ndarray:
    """(layers, T, T) head-averaged attention -> (T, T) rolled-out matrix A_{L-1} ... A_0."""
    attention = np.asarray(attention, dtype=np.float64)
    size = attention.shape[-1]
    result = np.eye(size)
    for layer in attention:
        step = 0.5 * layer + 0.5 * np.eye(size) if residual else layer
        result = step @ result
    return result


@register
class AttentionRollout(Explainer):
    id = "attention_rollout"
    contrast_support = "no-class"  # attention weights read no class
    label = "Attention rollout"
    family = "attention"
    description = "Attention multiplied through all layers: how much each input token flows into the " \
                  "summary token (or into every token, on average). Not a faithfulness guarantee."
    reference = "Abnar & Zuidema 2020; paper 003 section 2.2.2.3 (plain product, column mean)"

    @dataclass(frozen=True)
    class Params:
        variant: str = param("plain", "Variant", "plain: product of the head-averaged attention (paper 003); "
                             "residual: product of 0.5 A + 0.5 I (Abnar & Zuidema).", choices=VARIANTS)
        query: str = param("mean", "Query", "mean: column mean over all queries (paper 003); cls: the row of the "
                           "token the classifier reads (Abnar & Zuidema).", choices=QUERIES)

    presets = {
        "paper-003": {"variant": "plain", "query": "mean"},
        "abnar-zuidema": {"variant": "residual", "query": "cls"},
    }

    def is_signed(self) -> bool:
        return False

    def attribute(self, classifier, encoding, target):
        matrix = rollout(head_mean_attention(classifier, encoding), residual=self.params.variant == "residual")
        scores, rows = query_scores(classifier, encoding, matrix, self.params.query)
        return Attribution(token_scores=scores, baseline="n/a (attention weights)",
                           details={"variant": self.params.variant, "query": rows,
                                    "max_row_sum_error": float(np.abs(matrix.sum(axis=1) - 1).max())})
