"""Raw attention weights as importance: one layer or the mean over layers, mean over heads, and either
the row of the token the classifier reads ([CLS]) or the mean over all queries (attention received;
paper 003's "Average Attention", section 2.2.2.3). Attention is not an established importance measure
(paper 001 section 4); it is offered for comparison.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution, Explainer
from explainers.params import ParamError, param
from explainers.registry import register

QUERIES = ("cls", "mean")


def summary_index(classifier, encoding) -> int:
    """Position of the token the classification head reads ([CLS]; a decoder's pooled token; BART / T5: the last
    </s>, whose encoder row is shown)."""
    return classifier.pooled_index(encoding)


def head_mean_attention(classifier, encoding) -> np.ndarray:
    """(layers, tokens, tokens): attention averaged over heads; rows are queries, columns keys."""
    return classifier.attentions(encoding).mean(axis=1)


@register
class Attention(Explainer):
    id = "attention"
    contrast_support = "no-class"  # attention weights read no class
    label = "Attention weights"
    family = "attention"
    description = "How much attention the classifier's summary token (or every token, on average) pays to each " \
                  "token. Not a faithfulness guarantee."
    reference = "paper 003 section 2.2.2.3 (Average Attention); paper 001 section 4 on its limits"

    @dataclass(frozen=True)
    class Params:
        layer: int = param(-1, "Layer", "Layer index (-1 = last, -2 = second to last, ...); ignored when "
                           "averaging over layers.", min=-48, max=47, step=1)
        mean_over_layers: bool = param(False, "Mean over all layers", "Average the layers (paper 003).")
        query: str = param("cls", "Query", "cls: the row of the token the classifier reads; mean: attention "
                           "received, averaged over all query tokens (paper 003).", choices=QUERIES)

    presets = {
        "last-layer-cls": {"layer": -1, "mean_over_layers": False, "query": "cls"},
        "all-layers-cls": {"layer": -1, "mean_over_layers": True, "query": "cls"},
        "paper-003-average": {"layer": -1, "mean_over_layers": True, "query": "mean"},
    }

    def is_signed(self) -> bool:
        return False

    def attribute(self, classifier, encoding, target):
        attention = head_mean_attention(classifier, encoding)
        n_layers = attention.shape[0]
        if self.params.mean_over_layers:
            matrix, layers = attention.mean(axis=0), "mean over all layers"
        else:
            if not -n_layers <= self.params.layer < n_layers:
                raise ParamError(f"Layer {self.params.layer} does not exist; the model has {n_layers} layers "
                                 f"(0..{n_layers - 1}, or -1 for the last).")
            layer = self.params.layer % n_layers
            matrix, layers = attention[layer], f"layer {layer} of {n_layers}"
        scores, rows = query_scores(classifier, encoding, matrix, self.params.query)
        return Attribution(token_scores=scores, baseline="n/a (attention weights)",
                           details={"layers": layers, "query": rows, "heads": "mean over heads"})


def query_scores(classifier, encoding, matrix: np.ndarray, query: str) -> tuple[np.ndarray, str]:
    """The row of an attention (or rollout) matrix read as token scores: the summary token's row (``cls``), or the
    mean over every query token; with a description for the provenance."""
    if query == "cls":
        index = summary_index(classifier, encoding)
        return matrix[index], f"row of token {index} ({encoding.tokens[index]})"
    return matrix.mean(axis=0), "mean over all query tokens"
