"""How each architecture reads a batch: the parts of a forward pass that differ between decoders and
encoder-decoders (encoders run the model, or its first-token path, as it is; ``models/classifier.py``).

- decoders (GPT-2, Llama, ...) read the **pooled token**: rows are fed as embeddings, moved right so each row's last
  real position is the last column (``left_aligned``), with position ids counted from the first real token, so the
  head reads that position whatever ids a removal operator wrote (paper 003's code hit this with pad = eos:
  ``pad_is_eos_warning``);
- encoder-decoders (BART, T5) read the decoder's state at the last </s>; embeddings replace the word embeddings of
  both the encoder input and the (shifted) decoder input through forward hooks, since both refuse ``inputs_embeds``.
"""
from __future__ import annotations

from typing import Any

import torch  # noqa: E402  (runtime sets the environment first)

from models.errors import ModelError


def left_aligned(embeds: torch.Tensor, mask: torch.Tensor, token_types: torch.Tensor | None = None):
    """Rows moved right so each one's last real position (mask 1) is the last column (differentiable: a gather);
    returns (embeds, mask, token_types)."""
    width = mask.shape[1]
    last = width - 1 - mask.flip(-1).argmax(-1)
    # no "already aligned?" shortcut: testing it would synchronise with an accelerator on every pass
    shift = (width - 1 - last).unsqueeze(-1)
    index = (torch.arange(width, device=mask.device).unsqueeze(0) - shift) % width
    moved = embeds.gather(1, index.unsqueeze(-1).expand(-1, -1, embeds.shape[-1]))
    return moved, mask.gather(1, index), (token_types.gather(1, index) if token_types is not None else None)


def decoder_logits(model: Any, embeds: torch.Tensor, mask: torch.Tensor, token_types: torch.Tensor | None, *,
                   left_padded: bool, uses_token_types: bool) -> torch.Tensor:
    """A decoder on left-aligned rows: the head reads the last position; positions count real tokens only (a
    decoder without position ids: right-aligned rows, its head reads the last position its mask keeps)."""
    if left_padded:
        embeds, mask, token_types = left_aligned(embeds, mask, token_types)
    kwargs: dict[str, torch.Tensor] = {"inputs_embeds": embeds, "attention_mask": mask}
    if token_types is not None and uses_token_types:
        kwargs["token_type_ids"] = token_types
    if left_padded:
        kwargs["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0)
    return model(**kwargs).logits


def encoder_decoder_logits(model: Any, name: str, ids: torch.Tensor, mask: torch.Tensor,
                           embeds: torch.Tensor | None) -> torch.Tensor:
    """BART / T5: token ids (the head pools the last </s>); given embeddings replace the word embeddings of the
    encoder input and, shifted one to the right, of the decoder input (the model builds it from the same ids)."""
    if embeds is None:
        return model(input_ids=ids, attention_mask=mask).logits
    replacement: torch.Tensor = embeds
    calls = []

    def replace(module, _args, output):
        calls.append(module)
        if len(calls) == 1:  # the encoder runs first
            return replacement.to(output.dtype)
        return torch.cat([output[:, :1], replacement[:, :-1].to(output.dtype)], dim=1)  # decoder: shifted right

    weight = model.get_input_embeddings().weight
    handles = [m.register_forward_hook(replace) for m in model.modules() if getattr(m, "weight", None) is weight]
    try:
        logits = model(input_ids=ids, attention_mask=mask).logits
    finally:
        for handle in handles:
            handle.remove()
    if len(calls) != 2:
        raise ModelError(f"Model '{name}': expected the encoder and the decoder to embed the input once each, "
                         f"saw {len(calls)} embedding calls; gradients through its embeddings are not supported.")
    return logits


def placeholder_ids(model: Any, tokenizer: Any, mask: torch.Tensor) -> torch.Tensor:
    """Token ids for an encoder-decoder run on embeddings: </s> at each row's last real position (the token the
    head pools, as in the tokenized input), an ordinary token elsewhere; the embeddings replace them all."""
    config = model.config
    ordinary = next(i for i in range(len(tokenizer))
                    if i not in (config.eos_token_id, config.pad_token_id, config.decoder_start_token_id))
    ids = torch.full(mask.shape, ordinary, dtype=torch.long, device=mask.device)
    last = mask.shape[1] - 1 - mask.flip(-1).argmax(-1)
    ids[torch.arange(mask.shape[0], device=mask.device), last] = config.eos_token_id
    return ids


def same_eos_count(input_ids: list[list[int]], chunk: list[int], eos: int) -> list[list[int]]:
    """BART / T5 heads need the same number of </s> in every row of a batch: a chunk split where they differ."""
    groups: dict[int, list[int]] = {}
    for i in chunk:
        groups.setdefault(sum(t == eos for t in input_ids[i]), []).append(i)
    return list(groups.values())


def pad_is_eos_warning(model: Any, tokenizer: Any) -> list[str]:
    """What every explanation of a decoder that pads with its end-of-text token should say (none otherwise)."""
    pad, eos = model.config.pad_token_id, tokenizer.eos_token_id
    if pad is None or pad != eos:
        return []
    token = tokenizer.convert_ids_to_tokens(pad)
    return [f"This decoder pads with its end-of-text token ({token}: pad = eos). Its classification head reads "
            f"the last token that is not {token}, so an input that ends with {token} is read at the token before "
            f"it, and a removal that wrote {token} would move the token read (paper 003's code hit this on GPT-2). "
            f"Here the "
            f"token read is fixed on the unperturbed input (shown as the pooled token in the provenance) and "
            f"every perturbed copy is read at that same position."]
