"""Logits of an encoder whose head reads only [CLS], with the last layer computed for that one token (same logits).

The head of a BERT-style classifier (BERT's pooler, the RoBERTa / ELECTRA classification head) reads only the first
token's final hidden state. In the last transformer layer that state needs the keys and values of every token, but
the query, the attention output, its projection and the feed-forward of the first token only. For MiniLM-L6 that
removes ~14 % of a forward pass's FLOPs (41 % for a 2-layer model), and the backward of gradient methods shrinks
with it. The result equals the full model's up to float32 rounding (the same sums, fewer of them).

``first_token_logits`` runs the model's own modules: the embeddings, layers 0..L-2, the query / key / value /
output / feed-forward modules of the last layer and the head modules in call order (``Architecture.head``), so
forward hooks on them, Captum, autocast and randomized copies (same module tree, other weights) all work. Only the
last layer's attention kernel is called directly: torch's scaled_dot_product_attention with the layer's own scaling
and the padding mask as a boolean key mask, or, while the model runs its eager kernel (``eager_attention``: the
adversarial attack's double backprop, which CPU SDPA's fused kernel cannot differentiate twice), the same product
written out as matmul and softmax.

Support is decided once per model (``first_token_support``): the layout must be the BERT one (transformers'
``BertLayer`` and its copies: RoBERTa, XLM-R, CamemBERT, ELECTRA, ...) and a self-check on a padded dummy batch
(rows of different lengths, token types where the model uses them) must match ``model(...).logits`` within a
float32 tolerance. Anything else keeps the full model, and the reason is shown (``describe()``, provenance).
``EXWB_FULL_LAST_LAYER=1`` turns it off (for comparisons).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

import torch

from models import runtime
from models.architectures import Architecture, get_module, input_embedding, module_at, stack_at

if TYPE_CHECKING:
    from transformers import PreTrainedModel

ENABLED_NOTE = "last layer computed for the first token only (exact up to float32)"
# The parts of a BERT-style layer this path calls (transformers 5 BertLayer and its copies)
LAYER_PARTS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output",
               "intermediate", "output")
KERNELS = ("eager", "sdpa")  # attention implementations whose result SDPA reproduces within float32 rounding
# Self-check tolerance, relative to max(1, |logit|): 2^-12 = 512 float32 ulps (eps 2^-23 x 2^11). The two paths
# sum the same terms in another order (other matmul shapes, the fused kernel) through ~10 reductions of hundreds
# of terms each; a wrong mask or a skipped layer moves the logits by O(0.1) on any non-trivial model.
RELATIVE_TOLERANCE = 2.0 ** -12


# The parts of a BERT-style layer this path reads. torch types any attribute of a Module as ``Tensor | Module``;
# these name what ``_layout_problem`` checked before a model takes this path.
class _SelfAttention(Protocol):
    num_attention_heads: int
    attention_head_size: int
    scaling: float
    query: torch.nn.Module
    key: torch.nn.Module
    value: torch.nn.Module


class _Attention(Protocol):
    self: _SelfAttention
    output: torch.nn.Module


class _BertLayer(Protocol):
    attention: _Attention
    intermediate: torch.nn.Module
    output: torch.nn.Module


@dataclass(frozen=True)
class FirstTokenSupport:
    """Whether a model's logits take the first-token path; ``note`` says what is computed, or why not."""

    enabled: bool
    note: str


def full_model(reason: str) -> FirstTokenSupport:
    return FirstTokenSupport(False, f"full last layer: {reason}")


def first_token_support(model: PreTrainedModel, architecture: Architecture | None) -> FirstTokenSupport:
    """Decide once per model: the first-token path where its layout is known and the self-check passes."""
    if runtime.full_last_layer():
        return full_model("EXWB_FULL_LAST_LAYER=1")
    if architecture is None:
        return full_model("the model's parts could not be read")
    reason = _layout_problem(model, architecture)
    if reason is not None:
        return full_model(reason)
    deviation, scale = _self_check(model, architecture.head)
    if isinstance(deviation, str):
        return full_model(f"the self-check on a padded dummy batch failed ({deviation})")
    if not deviation <= RELATIVE_TOLERANCE * scale:  # `not <=`: a NaN deviation fails too
        return full_model(f"the self-check on a padded dummy batch differs from the full model by {deviation:.2g} "
                          f"(tolerance {RELATIVE_TOLERANCE * scale:.2g})")
    return FirstTokenSupport(True, ENABLED_NOTE)


def _layout_problem(model: PreTrainedModel, architecture: Architecture) -> str | None:
    """Why this model's layout is not the one the first-token path knows, or None."""
    if architecture.summary_token != "first":
        return "its head does not read the first token"
    base = getattr(model, "base_model", None)
    layers = getattr(getattr(base, "encoder", None), "layer", None)
    if base is None or base is model or not isinstance(layers, torch.nn.ModuleList) \
            or get_module(model, architecture.blocks) is not layers:
        return f"no BERT-style encoder.layer stack ({type(model).__name__})"
    last = layers[-1]
    if any(get_module(last, part) is None for part in LAYER_PARTS) \
            or not hasattr(get_module(last, "attention.self"), "scaling"):
        return f"its blocks ({type(last).__name__}) are not BERT-style layers"
    if getattr(last, "is_decoder", False) or getattr(last, "add_cross_attention", False):
        return "its blocks are decoder blocks"
    kernel = getattr(getattr(model, "config", None), "_attn_implementation", None)
    if kernel not in KERNELS:
        return f"attention implementation '{kernel}'"
    base_prefix = next(name for name, module in model.named_modules() if module is base)
    known = {f"{base_prefix}.embeddings", f"{base_prefix}.embeddings_project"}
    unknown = [path for path in architecture.embeddings if path not in known]
    if unknown:
        return f"modules run before the first block that this path does not call: {', '.join(unknown)}"
    return None


def _self_check(model: PreTrainedModel, head: tuple[str, ...]) -> tuple[float | str, float]:
    """(max |first-token - full| logit, max(1, |full logit|)) on three padded rows of different lengths; the
    error's text instead of the deviation where the first-token path fails."""
    config = getattr(model, "config", None)
    device = next(model.parameters()).device
    vocab = input_embedding(model).num_embeddings
    specials = {getattr(config, f"{k}_token_id", None) for k in ("pad", "bos", "eos", "cls", "sep")}
    ordinary = [i for i in range(min(vocab, 200)) if i not in specials]
    generator = torch.Generator().manual_seed(0)
    lengths = [7, 3, 5]
    width = max(lengths)
    ids = torch.tensor(ordinary)[torch.randint(len(ordinary), (len(lengths), width), generator=generator)]
    mask = (torch.arange(width).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)).long()
    pad = getattr(config, "pad_token_id", None)
    if pad is not None:
        ids = ids.masked_fill(mask == 0, pad)
    kwargs = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
    if getattr(config, "type_vocab_size", 0) > 1:  # a sentence pair: the second half of each row is segment 1
        kwargs["token_type_ids"] = ((torch.arange(width).unsqueeze(0) >= torch.tensor(lengths).unsqueeze(1) // 2)
                                    & (mask == 1)).long().to(device)
    with torch.no_grad():
        full = model(**kwargs).logits.float()
        try:
            fast = first_token_logits(model, head, **kwargs).float()
        except Exception as error:  # noqa: BLE001 - any failure of the probe means "keep the full model"
            return f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}", 1.0
    return float((fast - full).abs().max()), max(1.0, float(full.abs().max()))


def first_token_logits(model: PreTrainedModel, head: tuple[str, ...], attention_mask: torch.Tensor,
                       input_ids: torch.Tensor | None = None,
                       inputs_embeds: torch.Tensor | None = None,
                       token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
    """``model(...).logits`` of a BERT-style classifier, the last layer computed for the first token only; ``head``:
    the paths of the head's modules in call order (``Architecture.head``)."""
    base = model.base_model
    hidden = module_at(base, "embeddings")(input_ids=input_ids, token_type_ids=token_type_ids,
                                           inputs_embeds=inputs_embeds)
    project = get_module(base, "embeddings_project")  # ELECTRA: embedding size -> hidden size
    if project is not None:
        hidden = project(hidden)
    layers = stack_at(base, "encoder.layer")
    if len(layers) > 1:
        # lazy third-party import: transformers.masking_utils pulls torch._dynamo, ~2 s at import
        from transformers.masking_utils import create_bidirectional_mask

        # the base model shares the classifier's config object
        mask = create_bidirectional_mask(config=model.config, inputs_embeds=hidden, attention_mask=attention_mask)
        for layer in layers[:-1]:
            hidden = layer(hidden, mask)
    eager = getattr(model.config, "_attn_implementation", None) == "eager"
    features = _last_layer_first_token(layers[-1], hidden, attention_mask.bool(), eager)
    for path in head:  # (batch, 1, hidden) -> the head reads position 0 as it would have
        features = module_at(model, path)(features)
    return features


def _last_layer_first_token(layer: torch.nn.Module, hidden: torch.Tensor, keep: torch.Tensor,
                            eager: bool = False) -> torch.Tensor:
    """A BERT layer's output at position 0 only: its query against every kept position's key and value.
    ``keep``: (batch, tokens) True where the attention mask is 1; ``eager``: matmul and softmax instead of the fused
    kernel (twice differentiable). Returns (batch, 1, hidden)."""
    bert = cast(_BertLayer, layer)  # the layout _layout_problem checked
    attention = bert.attention.self
    batch, tokens, _ = hidden.shape
    heads, size = attention.num_attention_heads, attention.attention_head_size
    first = hidden[:, :1]
    query = attention.query(first).view(batch, 1, heads, size).transpose(1, 2)
    key = attention.key(hidden).view(batch, tokens, heads, size).transpose(1, 2)
    value = attention.value(hidden).view(batch, tokens, heads, size).transpose(1, 2)
    if eager:
        scores = (query @ key.transpose(-1, -2)) * attention.scaling
        scores = scores.masked_fill(~keep[:, None, None, :], torch.finfo(scores.dtype).min)
        context = torch.softmax(scores, dim=-1) @ value
    else:
        context = torch.nn.functional.scaled_dot_product_attention(
            query, key, value, attn_mask=keep[:, None, None, :], scale=attention.scaling)
    attended = bert.attention.output(context.transpose(1, 2).reshape(batch, 1, heads * size), first)
    return bert.output(bert.intermediate(attended), attended)
