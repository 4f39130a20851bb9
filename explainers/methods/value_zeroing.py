"""Value zeroing (Mohebbi, Zuidema, Chrupała & Alishahi 2023, "Quantifying Context Mixing in Transformers", EACL).

How much does token j shape the representation of token i at layer l? Zero the *value vector* of token j in
layer l's self-attention (its key stays, so the attention pattern is unchanged), rerun the layer, and measure how
far token i's output of the layer moved (section 3, Eq. 4):

    C_l[i, j] = cosine distance( x~_i^(l, v_j = 0), x~_i^(l) )

Each row is normalized to sum to 1 and the layers are combined by rollout, C = C_L ... C_1 (section 3, "we
aggregate ... using the rollout method"; variant ``last-layer`` reads C_L alone). The explanation is the row of
the token the classifier reads (its summary token, as attention rollout reads it); scores are unsigned and read
no class (a contrast class changes nothing).

Every architecture the module-tree rule reads (``models/architectures.py``): the layers are the calls of the blocks
of the first stack (an encoder-decoder's encoder; ALBERT's one shared block is called once per layer), the value
vectors are the output of each block's value projection (``value``, ``v_proj``, ``v_lin``, ``v``,
``value_proj``, or the last third of a fused ``c_attn`` / ``Wqkv``), zeroed by a forward hook.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.methods.attention import summary_index
from explainers.methods.attention_rollout import rollout
from explainers.params import param
from explainers.registry import register
from models import ModelError
from models.architectures import stack_at
from models.metering import count

VALUE_NAMES = ("value", "v_proj", "v_lin", "v", "value_proj")  # a separate value projection
FUSED_NAMES = ("c_attn", "Wqkv")  # [query; key; value] in one projection: the value is the last third
AGGREGATIONS = ("rollout", "last-layer")


class _Stop(Exception):
    """Raised by the hook of the probed layer: nothing after it is needed."""


def this_thread_only(hook):
    """The hook, run only for forward passes of the thread that registers it: module hooks are global to the model,
    and the app runs several methods on one model at once (background jobs), so another thread's forward pass
    must neither be zeroed nor stopped by this one's hooks."""
    owner = threading.get_ident()

    def guarded(*args, **kwargs):
        return hook(*args, **kwargs) if threading.get_ident() == owner else None

    return guarded


def value_projection(block: torch.nn.Module) -> tuple[torch.nn.Module, bool]:
    """(the block's self-attention value projection, whether it is fused with query and key): the first module in
    the block's tree named as one (the self-attention comes before a decoder block's cross-attention)."""
    for name, module in block.named_modules():
        last = name.rsplit(".", 1)[-1]
        if last in VALUE_NAMES:
            return module, False
        if last in FUSED_NAMES:
            return module, True
    raise ModelError(f"Value zeroing found no value projection in {type(block).__name__} (looked for modules named "
                     f"{', '.join(VALUE_NAMES + FUSED_NAMES)}); use attention rollout on this model.")


def _hidden(output) -> torch.Tensor:
    return output[0] if isinstance(output, (tuple, list)) else output


def layer_outputs(classifier, encoding, zero: Sequence[int | None], layer: int | None) -> list[torch.Tensor]:
    """Run the input once per entry of ``zero`` (a batch): row r has token ``zero[r]``'s value vector zeroed in
    layer ``layer`` (None: nothing zeroed). Returns every layer's output up to ``layer`` (all layers when None),
    each (rows, T, H); stops the forward pass after ``layer``."""
    model = classifier.model
    architecture = classifier.architecture
    if architecture is None:
        raise ModelError("Value zeroing needs the model's blocks, which the module-tree rule could not read.")
    blocks = stack_at(model, architecture.all_stacks[0])
    state = {"layer": -1}
    outputs: list[torch.Tensor] = []
    rows = torch.tensor([-1 if j is None else j for j in zero])
    hit = rows >= 0

    def zero_value(module, _args, output, fused: bool):
        if state["layer"] != layer or not hit.any():
            return None
        output = output.clone()
        width = output.shape[-1] // 3 if fused else output.shape[-1]
        index = torch.nonzero(hit).flatten()
        output[index, rows[index], output.shape[-1] - width:] = 0.0  # v_j = 0 (its key untouched)
        return output

    def before_block(_module, _args):
        state["layer"] += 1

    def after_block(_module, _args, output):
        outputs.append(_hidden(output).detach())
        if layer is not None and state["layer"] == layer:
            raise _Stop()

    handles = []
    try:
        for block in blocks:
            module, fused = value_projection(block)
            handles.append(module.register_forward_hook(
                this_thread_only(lambda m, a, o, fused=fused: zero_value(m, a, o, fused))))
            handles.append(block.register_forward_pre_hook(this_thread_only(before_block)))
            handles.append(block.register_forward_hook(this_thread_only(after_block)))
        tensors = classifier.tensors(encoding)
        inputs = {key: value.expand(len(zero), -1) for key, value in tensors.items() if value is not None}
        with torch.no_grad():
            try:
                model(**inputs)
            except _Stop:
                pass
        count(forward=len(zero), batches=1)  # the cost model's passes (partial forwards counted whole); honours Stop
    finally:
        for handle in handles:
            handle.remove()
    return outputs


def cosine_distance(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return 1.0 - torch.nn.functional.cosine_similarity(a.double(), b.double(), dim=-1)


def value_zeroing_matrices(classifier, encoding, rows_per_batch: int | None = None) -> np.ndarray:
    """(layers, T, T): C_l[i, j] = cosine distance of token i's layer-l output with and without v_j (Eq. 4), before
    any normalization."""
    n = encoding.n_tokens
    original = layer_outputs(classifier, encoding, [None], None)
    rows_per_batch = rows_per_batch or max(1, classifier.max_batch_tokens // max(n, 1))
    matrices = np.zeros((len(original), n, n))
    for layer, reference in enumerate(original):
        for start in range(0, n, rows_per_batch):
            tokens = list(range(start, min(n, start + rows_per_batch)))
            zeroed = layer_outputs(classifier, encoding, tokens, layer)[layer]  # (len(tokens), T, H)
            distances = cosine_distance(zeroed, reference).clamp_min(0).cpu().numpy()  # [r, i]: token i, v_tokens[r] = 0
            matrices[layer][:, tokens] = distances.T  # column j: what zeroing v_j did to every token i
    return matrices


def normalize_rows(matrix: np.ndarray) -> np.ndarray:
    sums = matrix.sum(axis=-1, keepdims=True)
    return np.divide(matrix, sums, out=np.zeros_like(matrix), where=sums > 0)


@register
class ValueZeroing(Explainer):
    id = "value_zeroing"
    label = "Value zeroing"
    family = "attention"
    description = "Zero one token's value vector in a layer and measure how far every token's output of the layer " \
                  "moves (cosine distance); layers rolled out, read at the token the classifier reads."
    reference = "Mohebbi et al. 2023 (EACL) section 3, Eq. 4; inseq's value zeroing"
    contrast_support = "no-class"  # representations, not a class score

    @dataclass(frozen=True)
    class Params:
        aggregation: str = param("rollout", "Across layers", "rollout: the row-normalized matrices multiplied "
                                 "through the layers (Mohebbi et al.); last-layer: the last layer's matrix alone.",
                                 choices=AGGREGATIONS)

    presets = {"mohebbi-2023": {"aggregation": "rollout"}}

    def is_signed(self) -> bool:
        return False

    def estimate_passes(self, encoding):
        return 1 + encoding.n_tokens * 2, 0  # rows of partial forwards, about half the layers each

    def attribute(self, classifier, encoding, target):
        matrices = normalize_rows(value_zeroing_matrices(classifier, encoding))
        combined = rollout(matrices) if self.params.aggregation == "rollout" else matrices[-1]
        index = summary_index(classifier, encoding)
        return Attribution(token_scores=combined[index], baseline="n/a (value vectors zeroed one at a time)",
                           details={"layers": len(matrices), "row": f"token {index} ({encoding.tokens[index]})",
                                    "aggregation": self.params.aggregation})
