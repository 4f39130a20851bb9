"""The differentiable function gradient methods attribute: word embeddings -> one output per class."""
from __future__ import annotations

from collections.abc import Callable

import torch

from explainers.contrast import contrast_columns
from models import Encoding, ModelError, TextClassifier

OUTPUTS = ("logit", "probability", "log-probability")
# how per-dimension scores of a token become one score: the signed sum (Captum's convention, papers 001 / 003) or the
# L1 norm over the embedding dimension (paper 002 App. A.1, its "_n" rows: L2 "gave no significant difference")
REDUCTIONS = ("sum", "l1")


def reduce_dimensions(per_dimension: torch.Tensor, reduction: str) -> torch.Tensor:
    """(tokens, dim) -> (tokens,): the signed sum, or the L1 norm (never negative)."""
    return per_dimension.abs().sum(dim=-1) if reduction == "l1" else per_dimension.sum(dim=-1)
OUTPUT_TRANSFORMS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {  # logits -> the output differentiated
    "logit": lambda logits: logits,
    "probability": lambda logits: torch.softmax(logits, dim=-1),
    "log-probability": lambda logits: torch.log_softmax(logits, dim=-1),
}


def embedding_function(classifier: TextClassifier, encoding: Encoding, output: str = "logit"):
    """(f, embeddings, pad_embeddings): f maps a batch of word embeddings to outputs of every class.

    Captum differentiates f with respect to the embeddings; position and segment embeddings are added
    inside the model, so only the word embeddings are attributed.
    """
    tensors = classifier.tensors(encoding)
    mask, types = tensors["attention_mask"], tensors.get("token_type_ids")
    transform = OUTPUT_TRANSFORMS[output]

    def forward(inputs_embeds: torch.Tensor) -> torch.Tensor:
        return contrast_columns(transform(classifier.forward_embeds(inputs_embeds, mask, types)))  # s(A) - s(B)

    embeddings = classifier.word_embeddings(tensors["input_ids"]).detach()
    return forward, embeddings


def baseline_ids(classifier: TextClassifier, encoding: Encoding, kind: str) -> torch.Tensor:
    """Baseline token ids: every non-special token replaced by [PAD] / [MASK] (special tokens kept)."""
    token_id = {"pad": classifier.tokenizer.pad_token_id, "mask": classifier.tokenizer.mask_token_id}[kind]
    if token_id is None:
        raise ModelError(f"The tokenizer of '{classifier.name}' has no [{kind.upper()}] token; use another baseline.")
    ids = torch.tensor([encoding.input_ids], device=classifier.device)
    special = torch.tensor([encoding.special], device=classifier.device)
    return torch.where(special, ids, torch.full_like(ids, token_id))


def baseline_embeddings(classifier: TextClassifier, encoding: Encoding, kind: str) -> torch.Tensor:
    """Baseline in word-embedding space: 'pad' / 'mask' (special tokens kept) or 'zero' (all zero vectors)."""
    if kind == "zero":
        return torch.zeros_like(classifier.word_embeddings(torch.tensor([encoding.input_ids], device=classifier.device)))
    return classifier.word_embeddings(baseline_ids(classifier, encoding, kind)).detach()


BASELINE_LABELS = {
    "pad": "[PAD] at every word token, special tokens kept (paper 003)",
    "mask": "[MASK] at every word token, special tokens kept",
    "zero": "zero word-embedding vectors at every position (paper 001)",
}
