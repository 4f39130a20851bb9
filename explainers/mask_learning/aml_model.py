"""AML's attribution model G and its loss (paper 004 s. 3.1-3.3, Eq. 1-7; seeds-002-004.md 004.2).

G (s. 3.3): an encoder initialised from the explained classifier's own backbone (its embedding layer frozen,
as in the reference code, which starts from the fine-tuned checkpoint), a shared head d -> d -> 1 (tanh,
then sigmoid) on every token's last hidden state, and the prediction encoding z_v = z_0 + sum_j y_v[j] z_j
appended after the last token as one extra position (its hidden state is dropped before the head). A causal
backbone (a decoder) reads left to right, so no token could see a z_v after it and G would ignore the prediction it
explains: there z_v is the first position instead (``prediction_slot`` "first", written in the manifest).

The loss of one input (Eq. 4-7), with the explained classifier F frozen and gradients flowing through it:
    lambda_p L_p + lambda_a L_a + lambda_inv L_inv
    L_p   = -sum_j y_v[j] log F(x')[j]            x'  = a x + (1 - a) m    (Eq. 3 and 5)
    L_inv = -log(1 - F(x'')[y]), y = argmax y_v   x'' = (1 - a) x + a m    (Eq. 6)
    L_a   = -(1/k) sum_j log(1 - a_j)                                      (Eq. 7)
with m the word embedding of [MASK] at every position (special tokens included, as coded). y_v is F's
probability vector (the paper) or its one-hot argmax (the reference code: ``prediction_target="argmax"``).
"""
from __future__ import annotations

import copy
import inspect
from typing import TYPE_CHECKING

import torch
from torch import nn

from explainers.mask_learning.length_groups import grouped_forward_embeds
from models import ModelError, TextClassifier

if TYPE_CHECKING:
    from transformers import PreTrainedModel

PREDICTION_TARGETS = ("soft", "argmax")  # paper Eq. 5 / reference code
PREDICTION_SLOTS = ("after", "first")  # where z_v goes: after the last token (encoders), first (causal backbones)
MASK_TOKENS = ("mask", "unk", "pad")


class AttributionModel(nn.Module):
    """G: token scores in [0, 1] for the prediction y_v of the explained classifier (returned as logits)."""

    def __init__(self, encoder: PreTrainedModel, n_classes: int, dropout: float = 0.1, prediction_slot: str = "after"):
        super().__init__()
        if prediction_slot not in PREDICTION_SLOTS:
            raise ValueError(f"prediction_slot must be one of {', '.join(PREDICTION_SLOTS)}; got {prediction_slot!r}")
        self.prediction_slot = prediction_slot
        self.encoder = encoder
        if getattr(self.encoder, "pooler", None) is not None:
            # G reads every token; the pooler would only carry unused weights
            self.encoder.register_module("pooler", None)
        for parameter in self.encoder.parameters():  # a copy of the classifier's backbone arrives frozen
            parameter.requires_grad_(True)
        self.freeze_embeddings()
        hidden = self.encoder.config.hidden_size
        self.z0 = nn.Parameter(0.02 * torch.randn(hidden))  # N(0, initializer_range = 0.02) as coded
        self.class_embeddings = nn.Parameter(0.02 * torch.randn(n_classes, hidden))
        self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self._takes_types = "token_type_ids" in inspect.signature(self.encoder.forward).parameters

    @classmethod
    def from_classifier(cls, classifier: TextClassifier, dropout: float = 0.1, seed: int = 0) -> AttributionModel:
        base = getattr(classifier.model, "base_model", None)
        if base is None or base is classifier.model or not hasattr(base, "get_input_embeddings"):
            raise ModelError(f"AML needs a classifier with a separate encoder backbone; '{classifier.name}' "
                             f"({getattr(classifier.model.config, 'model_type', '?')}) has none.")
        generator_state = torch.random.get_rng_state()
        torch.manual_seed(seed)
        try:
            model = cls(copy.deepcopy(base), classifier.num_labels, dropout, prediction_slot_of(classifier))
        finally:
            torch.random.set_rng_state(generator_state)
        return model.to(classifier.device)

    def embedding_parameters(self) -> list[nn.Parameter]:
        modules = [self.encoder.get_input_embeddings(), getattr(self.encoder, "embeddings", None)]
        return [parameter for module in modules if module is not None for parameter in module.parameters()]

    def fixed_in_finetuning(self) -> list[nn.Parameter]:
        """What fAML never trains: the embedding layer, z_0 and the class embeddings (reference code)."""
        return self.embedding_parameters() + [self.z0, self.class_embeddings]

    def freeze_embeddings(self) -> None:
        """The embedding layer stays as the classifier has it (reference code: the whole embedding module)."""
        for parameter in self.embedding_parameters():
            parameter.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, prediction: torch.Tensor,
                token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        """Logits of a (B, T); ``prediction`` is y_v (B, n_classes). Padding positions get meaningless values."""
        embeddings = self.encoder.get_input_embeddings()(input_ids)
        batch, width, _ = embeddings.shape
        z = self.z0 + prediction.to(embeddings.dtype) @ self.class_embeddings  # z_v (s. 3.3)
        if self.prediction_slot == "first":  # a causal backbone: every token sees z_v before it
            kwargs = {"inputs_embeds": torch.cat([z[:, None, :], embeddings], dim=1),
                      "attention_mask": torch.cat([attention_mask.new_ones(batch, 1), attention_mask], dim=1)}
            if token_type_ids is not None and self._takes_types:
                kwargs["token_type_ids"] = torch.cat([token_type_ids.new_zeros(batch, 1), token_type_ids], dim=1)
            return self.head(self.encoder(**kwargs).last_hidden_state[:, 1:]).squeeze(-1)
        lengths = attention_mask.sum(dim=1)
        slot = torch.arange(width + 1, device=input_ids.device)[None, :] == lengths[:, None]  # right after the input
        extended = torch.cat([embeddings, embeddings.new_zeros(batch, 1, embeddings.shape[-1])], dim=1)
        extended = torch.where(slot[..., None], z[:, None, :], extended)
        attention = torch.cat([attention_mask, attention_mask.new_zeros(batch, 1)], dim=1) | slot.long()
        kwargs = {"inputs_embeds": extended, "attention_mask": attention}
        if token_type_ids is not None and self._takes_types:
            kwargs["token_type_ids"] = torch.cat([token_type_ids, token_type_ids.new_zeros(batch, 1)], dim=1)
        hidden = self.encoder(**kwargs).last_hidden_state[:, :width]
        return self.head(hidden).squeeze(-1)


def prediction_slot_of(classifier: TextClassifier) -> str:
    """Where G puts z_v for this classifier's backbone (see the module docstring)."""
    return "first" if classifier.causal else "after"


# ----- masking and the loss ---------------------------------------------------------------------------------
def mask_token_id(classifier: TextClassifier, choice: str = "mask") -> tuple[int, str | None]:
    """(token id, note): [MASK] (paper), else [UNK]; a note says when the choice was not available."""
    tokenizer = classifier.tokenizer
    ids = {"mask": tokenizer.mask_token_id, "unk": tokenizer.unk_token_id, "pad": tokenizer.pad_token_id}
    if ids.get(choice) is not None:
        return int(ids[choice]), None
    for fallback in ("unk", "pad"):
        if ids[fallback] is not None:
            return int(ids[fallback]), (f"The tokenizer of '{classifier.name}' has no [{choice.upper()}] token; AML "
                                        f"masks toward [{fallback.upper()}] instead (paper 004 uses [UNK] for "
                                        f"decoders).")
    raise ModelError(f"The tokenizer of '{classifier.name}' has none of [MASK], [UNK], [PAD]; AML cannot mask.")


def soft_masked(x: torch.Tensor, m: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
    """M(a, x) = a x + (1 - a) m per token (Eq. 3); a (B, T), x (B, T, d), m (d,) or (B, T, d)."""
    a = a.unsqueeze(-1).to(x.dtype)
    return a * x + (1 - a) * m


def prediction_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """L_p (Eq. 5): cross-entropy of F(x') against y_v (B, C), averaged over the batch."""
    return -(target * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


def inverse_loss(logits: torch.Tensor, label: torch.Tensor) -> torch.Tensor:
    """L_inv (Eq. 6): -log(1 - F(x'')[y]) = -(logsumexp of the other classes - logsumexp of all), batch mean."""
    log_p = torch.log_softmax(logits, dim=-1)
    others = log_p.masked_fill(torch.nn.functional.one_hot(label, logits.shape[-1]).bool(), float("-inf"))
    return -torch.logsumexp(others, dim=-1).mean()


def attribution_loss(score_logits: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """L_a (Eq. 7): -(1/k) sum_j log(1 - a_j) over each input's k tokens (log(1 - sigmoid(s)) = logsigmoid(-s)),
    averaged over the batch."""
    weights = attention_mask.to(score_logits.dtype)
    per_input = -(torch.nn.functional.logsigmoid(-score_logits) * weights).sum(dim=1) / weights.sum(dim=1)
    return per_input.mean()


def conditioning(probabilities: torch.Tensor, label: torch.Tensor, how: str) -> torch.Tensor:
    """y_v: F's probability vectors ("soft", paper) or one-hot labels ("argmax", reference code)."""
    if how == "soft":
        return probabilities
    if how == "argmax":
        return torch.nn.functional.one_hot(label, probabilities.shape[-1]).to(probabilities.dtype)
    raise ValueError(f"prediction target must be one of {', '.join(PREDICTION_TARGETS)}; got {how!r}")


def aml_terms(classifier: TextClassifier, model: AttributionModel, input_ids: torch.Tensor,
              attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None, y: torch.Tensor,
              label: torch.Tensor, mask_id: int, lambdas: tuple[float, float, float],
              group_lengths: bool = True) -> dict[str, torch.Tensor]:
    """The weighted terms of Eq. 4 for a batch; a term whose lambda is 0 is absent (and costs no forward).

    ``group_lengths``: the classifier reads x' and x'' in one call, in groups of similar length
    (``length_groups.py``; the same terms up to float rounding, faster); False runs the two plain padded passes."""
    scores = model(input_ids, attention_mask, y, token_type_ids)
    return terms_of_scores(classifier, scores, input_ids, attention_mask, token_type_ids, y, label, mask_id, lambdas,
                           group_lengths)


def terms_of_scores(classifier: TextClassifier, scores: torch.Tensor, input_ids: torch.Tensor,
                    attention_mask: torch.Tensor, token_type_ids: torch.Tensor | None, y: torch.Tensor,
                    label: torch.Tensor, mask_id: int, lambdas: tuple[float, float, float],
                    group_lengths: bool = True) -> dict[str, torch.Tensor]:
    """``aml_terms`` from G's score logits already computed (fAML reads the same forward's scores as its map)."""
    lambda_p, lambda_a, lambda_inv = lambdas
    a = torch.sigmoid(scores)
    x = classifier.word_embeddings(input_ids).detach()
    m = classifier.word_embeddings(torch.tensor(mask_id, device=input_ids.device)).detach()
    inputs = {}
    if lambda_p:
        inputs["kept"] = soft_masked(x, m, a)
    if lambda_inv:
        inputs["removed"] = soft_masked(x, m, 1 - a)
    if group_lengths and inputs:
        copies = len(inputs)
        types = token_type_ids.repeat(copies, 1) if token_type_ids is not None else None
        logits = grouped_forward_embeds(classifier, torch.cat(list(inputs.values())),
                                        attention_mask.repeat(copies, 1), types)
        outputs = dict(zip(inputs, logits.split(input_ids.shape[0])))
    else:
        outputs = {name: classifier.forward_embeds(value, attention_mask, token_type_ids)
                   for name, value in inputs.items()}
    terms = {}
    if lambda_p:
        terms["prediction"] = lambda_p * prediction_loss(outputs["kept"], y)
    if lambda_a:
        terms["attribution"] = lambda_a * attribution_loss(scores, attention_mask)
    if lambda_inv:
        terms["inverse"] = lambda_inv * inverse_loss(outputs["removed"], label)
    return terms
