"""ALTI, Aggregation of Layer-wise Token-to-token Interactions (Ferrando, Gállego & Costa-jussà 2022, "Measuring
the Mixing of Contextual Information in the Transformer", EMNLP; a baseline of paper 004, section 4).

Each layer's attention sub-layer (attention, output projection, residual and, where it follows, LayerNorm) is
written as a sum over source tokens, y_i = sum_j T_i(x_j) + bias (section 3, Eq. 6-8): T_i(x_j) is what token j
sends to token i through the attention (A_ij W_O v_j, summed over heads) plus, for j = i, the residual x_i; a
LayerNorm after the residual is linear once its standard deviation sigma_i is fixed (Kobayashi et al. 2021), so
T_i(x_j) = gamma * (u_ij - mean(u_ij)) / sigma_i. The contribution of j to i is how much closer y_i is to T_i(x_j)
than to nothing, in the L1 norm (Eq. 9), rows normalized to sum to 1 (Eq. 10); the layers are rolled out (Eq. 11)
and the row of the token the classifier reads is the explanation.

    c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1),  y_i = sum_j T_i(x_j)  (biases left out, as in the paper)

Every architecture the module-tree rule reads (``models/architectures.py``), without a table of module names:
A_ij W_O v_j is measured, not rebuilt, because the attention output is linear in the value vectors once the
attention weights are fixed (zeroing values changes no weight): the output projection's output with only token
j's value kept, minus its output with no value kept (the bias). The output projection is the first linear module
the block calls after its value projection (``value_zeroing.value_projection``) on the block's tokens; a LayerNorm
called next on output + block input is the post-LN norm (BERT, RoBERTa, DistilBERT, ALBERT, DeBERTa, MPNet,
BART), unless the block's output is that same sum plus its feed-forward output (pre-LN: GPT-2, Llama, T5, ...,
where y_i = x_i + attention output and no norm follows). The decomposition is checked against the model's own
output of the sub-layer (``max_decomposition_error`` in the provenance).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explainers.base import Attribution, Explainer
from explainers.methods.attention import summary_index
from explainers.methods.attention_rollout import rollout
from explainers.methods.value_zeroing import _hidden, _Stop, normalize_rows, this_thread_only, value_projection
from explainers.params import param
from explainers.registry import register
from models import ModelError
from models.architectures import stack_at
from models.metering import count

AGGREGATIONS = ("rollout", "last-layer")


@dataclass(frozen=True)
class AffineNorm:
    """What the decomposition reads of a post-LN LayerNorm: its affine weight and bias, and its epsilon."""

    weight: torch.Tensor
    bias: torch.Tensor
    eps: float


@dataclass
class LayerTrace:
    """One layer of the unperturbed forward pass: what the decomposition needs."""

    x: torch.Tensor  # (T, H) the block's input
    o: torch.Tensor  # (T, H) the attention output projection's output
    projection: torch.nn.Module  # that output projection
    norm: AffineNorm | None  # the post-LN norm after the residual; None for pre-LN blocks
    y: torch.Tensor  # (T, H) the sub-layer's output: norm(o + x) or o + x


def _linear_like(module) -> bool:
    return isinstance(module, torch.nn.Linear) or type(module).__name__ == "Conv1D"


def _norm_like(module) -> bool:
    return "norm" in type(module).__name__.lower()


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and bool(torch.allclose(a, b, rtol=1e-4, atol=1e-5 * float(b.abs().max()) + 1e-6))


def _blocks(classifier):
    architecture = classifier.architecture
    if architecture is None:
        raise ModelError("ALTI needs the model's blocks, which the module-tree rule could not read.")
    return stack_at(classifier.model, architecture.all_stacks[0])


def _inputs(classifier, encoding, rows: int) -> dict:
    tensors = classifier.tensors(encoding)
    return {key: value.expand(rows, -1) for key, value in tensors.items() if value is not None}


def trace_layers(classifier, encoding) -> list[LayerTrace]:
    """One unperturbed forward with every module call inside the blocks logged per layer (block call), read into
    (input, output projection, post-LN norm or none, sub-layer output) per layer."""
    blocks = _blocks(classifier)
    calls: list[list[tuple]] = []  # per layer: (module, first input, output) in call order
    inputs, outputs = [], []

    def before_block(_module, args, kwargs):
        hidden = args[0] if args else kwargs.get("hidden_states")
        inputs.append(hidden.detach()[0])
        calls.append([])

    def after_block(_module, _args, output):
        outputs.append(_hidden(output).detach()[0])

    def log(module, args, output):
        if calls and args and isinstance(args[0], torch.Tensor) and isinstance(output, torch.Tensor):
            calls[-1].append((module, args[0].detach()[0], output.detach()[0]))

    handles = []
    try:
        for block in blocks:
            handles.append(block.register_forward_pre_hook(this_thread_only(before_block), with_kwargs=True))
            handles.append(block.register_forward_hook(this_thread_only(after_block)))
            handles += [m.register_forward_hook(this_thread_only(log)) for name, m in block.named_modules() if name]
        with torch.no_grad():
            classifier.model(**_inputs(classifier, encoding, 1))
        count(forward=1, batches=1)
    finally:
        for handle in handles:
            handle.remove()
    traces = []
    for layer, (x, out, logged) in enumerate(zip(inputs, outputs, calls)):
        block = blocks[min(layer, len(blocks) - 1)]
        value, _ = value_projection(block)
        traces.append(_read_layer(layer, x, out, logged, value))
    return traces


def _read_layer(layer: int, x: torch.Tensor, block_output: torch.Tensor, logged: list, value) -> LayerTrace:
    tokens, hidden = x.shape
    start = next((k for k, (m, _, _) in enumerate(logged) if m is value), None)
    if start is None:
        raise ModelError(f"ALTI: layer {layer} never called its value projection; use attention rollout here.")
    after = logged[start + 1:]
    value_input = logged[start][1]
    found = next(((k, m, o) for k, (m, i, o) in enumerate(after) if _linear_like(m) and i.dim() == 2
                  and i.shape[0] == tokens and o.shape == (tokens, hidden)
                  and not (i.shape == value_input.shape and torch.equal(i, value_input))), None)  # not q / k
    if found is None:
        raise ModelError(f"ALTI: no output projection found after the value projection of layer {layer}.")
    index, projection, o = found
    residual = o + x
    norm = next(((m, i, out) for m, i, out in after[index + 1:] if _norm_like(m)), None)
    if norm is None or not _close(norm[1], residual):
        return LayerTrace(x, o, projection, None, residual)  # pre-LN (or parallel, Phi): y = x + attention output
    last_linear = [out for m, _, out in after if _linear_like(m) and out.shape == (tokens, hidden)][-1]
    if _close(block_output, residual + last_linear):  # the stream carries o + x on: the norm fed the MLP only
        return LayerTrace(x, o, projection, None, residual)
    weight, bias, eps = (getattr(norm[0], name, None) for name in ("weight", "bias", "eps"))
    if not (isinstance(weight, torch.Tensor) and isinstance(bias, torch.Tensor) and isinstance(eps, (int, float))):
        raise ModelError(f"ALTI: layer {layer}'s post-attention norm ({type(norm[0]).__name__}) is not a LayerNorm "
                         f"with weight, bias and eps; use value zeroing or attention rollout here.")
    return LayerTrace(x, o, projection, AffineNorm(weight, bias, float(eps)), norm[2])


def attention_terms(classifier, encoding, layer: int, trace: LayerTrace,
                    rows_per_batch: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(T sources, T targets, H): A_ij W_O v_j for every source j (the output projection's output with only v_j
    kept, minus its output with no value kept), and that output with no value kept (T, H): the bias."""
    blocks = _blocks(classifier)
    n = encoding.n_tokens
    sources = list(range(-1, n))  # -1: every value zeroed (the output projection's bias alone)
    found = []
    for begin in range(0, len(sources), rows_per_batch):
        chunk = sources[begin:begin + rows_per_batch]
        keep = torch.zeros(len(chunk), n)
        for row, j in enumerate(chunk):
            if j >= 0:
                keep[row, j] = 1.0
        state = {"layer": -1}

        # this chunk's state and mask bound as defaults: the hooks must not see a later chunk's
        def before_block(_module, _args, state=state):
            state["layer"] += 1

        def keep_one(_module, _args, output, fused: bool, state=state, keep=keep):
            if state["layer"] != layer:
                return None
            width = output.shape[-1] // 3 if fused else output.shape[-1]
            output = output.clone()
            output[..., output.shape[-1] - width:] *= keep[..., None].to(output.dtype)
            return output

        def stop(_module, _args, output, state=state):
            if state["layer"] == layer:
                found.append(output.detach())
                raise _Stop()

        handles = []
        try:
            for block in blocks:
                value, fused = value_projection(block)
                handles.append(block.register_forward_pre_hook(this_thread_only(before_block)))
                handles.append(value.register_forward_hook(
                    this_thread_only(lambda m, a, o, fused=fused: keep_one(m, a, o, fused))))
            handles.append(trace.projection.register_forward_hook(this_thread_only(stop)))
            with torch.no_grad():
                try:
                    classifier.model(**_inputs(classifier, encoding, len(chunk)))
                except _Stop:
                    pass
            count(forward=len(chunk), batches=1)  # partial forwards counted whole; honours Stop
        finally:
            for handle in handles:
                handle.remove()
    outputs = torch.cat(found)  # (T + 1, T, H)
    return outputs[1:] - outputs[:1], outputs[0]


def decompose(trace: LayerTrace, terms: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, float]:
    """(T targets, T sources, H): T_i(x_j), and the largest error of sum_j T_i(x_j) + biases against the model's
    own sub-layer output (a check of the linearity in the values and of the norm's reading)."""
    n = trace.x.shape[0]
    u = terms.transpose(0, 1).double()  # [i, j]: what j sends to i through the attention
    u = u + torch.diag_embed(torch.ones(n, dtype=torch.float64))[..., None] * trace.x.double()[None]  # + residual
    bias = bias.double()
    if trace.norm is None:
        return u, float((u.sum(dim=1) + bias - trace.y.double()).abs().max())
    total = trace.o.double() + trace.x.double()
    sigma = torch.sqrt(total.var(dim=-1, unbiased=False, keepdim=True) + trace.norm.eps)  # (T, 1)
    gamma, beta = trace.norm.weight.detach().double(), trace.norm.bias.detach().double()
    transformed = gamma * (u - u.mean(dim=-1, keepdim=True)) / sigma[:, None]
    constant = gamma * (bias - bias.mean(dim=-1, keepdim=True)) / sigma + beta
    return transformed, float((transformed.sum(dim=1) + constant - trace.y.double()).abs().max())


def contributions(transformed: torch.Tensor) -> np.ndarray:
    """Eq. 9-10: c_ij = max(0, ||y_i||_1 - ||y_i - T_i(x_j)||_1), y_i = sum_j T_i(x_j); rows sum to 1."""
    y = transformed.sum(dim=1, keepdim=True)
    c = (y.abs().sum(dim=-1) - (y - transformed).abs().sum(dim=-1)).clamp_min(0)
    return normalize_rows(c.cpu().numpy())


def alti_matrices(classifier, encoding, rows_per_batch: int | None = None) -> tuple[np.ndarray, float]:
    """(layers, T, T) row-normalized contribution matrices and the largest decomposition error."""
    n = encoding.n_tokens
    rows_per_batch = rows_per_batch or max(1, classifier.max_batch_tokens // max(n, 1))
    matrices, error = [], 0.0
    for layer, trace in enumerate(trace_layers(classifier, encoding)):
        transformed, layer_error = decompose(trace, *attention_terms(classifier, encoding, layer, trace,
                                                                     rows_per_batch))
        matrices.append(contributions(transformed))
        error = max(error, layer_error)
    return np.stack(matrices), error


@register
class ALTI(Explainer):
    id = "alti"
    label = "ALTI (token-to-token interactions)"
    family = "attention"
    description = "Each layer's attention sub-layer split into what every token sends to every other (values, " \
                  "output projection, residual, LayerNorm); L1 contributions rolled out over the layers."
    reference = "Ferrando et al. 2022 (EMNLP) section 3, Eq. 6-11; paper 004 section 4 (ALTI)"
    contrast_support = "no-class"  # representations, not a class score

    @dataclass(frozen=True)
    class Params:
        aggregation: str = param("rollout", "Across layers", "rollout: the contribution matrices multiplied through "
                                 "the layers (Ferrando et al. Eq. 11); last-layer: the last layer's alone.",
                                 choices=AGGREGATIONS)

    presets = {"ferrando-2022": {"aggregation": "rollout"}}

    def is_signed(self) -> bool:
        return False

    def estimate_passes(self, encoding):
        return 1 + encoding.n_tokens * 2, 0

    def attribute(self, classifier, encoding, target):
        matrices, error = alti_matrices(classifier, encoding)
        combined = rollout(matrices) if self.params.aggregation == "rollout" else matrices[-1]
        index = summary_index(classifier, encoding)
        warnings = []
        if error > 1e-3:
            warnings.append(f"The decomposition of the attention sub-layer misses the model's own output by up to "
                            f"{error:.2g}: this model's blocks are not the attention + residual (+ LayerNorm) ALTI "
                            f"assumes; read the scores with care.")
        return Attribution(token_scores=combined[index], baseline="n/a (decomposition of the attention sub-layers)",
                           details={"layers": len(matrices), "row": f"token {index} ({encoding.tokens[index]})",
                                    "aggregation": self.params.aggregation, "max_decomposition_error": error},
                           warnings=warnings)
