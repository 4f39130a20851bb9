"""The one memory model: bytes per token of each pass kind, one budget, and the recovery from out-of-memory errors.

Beside the cost model (models/metering.py, how long work takes) this says how much memory a batch needs, so that
every pass kind sizes its batches from one budget instead of one forward-only rule:

| pass kind          | live bytes per token of n-token rows; e = element size, q = 1 under eager attention, else 0 |
|--------------------|-------------------------------------------------------------------------------------------|
| forward            | e x (FORWARD_HIDDEN x hidden + 2 x intermediate + q x heads x n): one layer's working set  |
|                    | (inference frees each layer's activations). Eager attention holds heads x n scores per    |
|                    | token (quadratic in the length); SDPA's fused kernels do not (measured: flat in n)        |
| backward           | forward + layers x e x (SAVED_HIDDEN x hidden + intermediate + SAVED_ATTENTION x q x       |
|                    | heads x n): what autograd keeps per layer for input gradients (the weights are frozen, so |
|                    | no layer input is kept for a weight gradient): norms' and attention's inputs, the GELU's  |
|                    | input, under eager attention the probabilities                                            |
| double_backward    | DOUBLE_FACTOR x backward with q = 1: ``create_graph=True`` keeps the backward graph too    |
|                    | (the adversarial attack, evaluation/adversarial/attack.py, runs under eager attention)    |

The coefficients were measured on this project's CPU (peak RSS of a subprocess, tests/models/test_memory.py) for
BERT-like encoders in float32; the tests hold the model within 30 % of the measured peak for a tiny and a
BERT-base-size model. The budget: EXWB_MEMORY_GB when set, else GPU_SHARE of the free device memory (CUDA) or
CPU_SHARE of the available RAM, times EXWB_DEVICE_SHARE (a Ray task that asked for half a GPU gets half).

Out of memory (``torch.cuda.OutOfMemoryError``, or the CPU allocator's ``RuntimeError`` / ``MemoryError``): the
pass that hit it halves its batch and retries (``run_halving``); the limit is remembered for the process per model
shape, device and pass kind (``learned_limit``), so later batches start under it, and ``notes_for`` gives the
provenance its record. Batches already finished are kept: only the failed batch is retried.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path

import torch

import settings

PASS_KINDS = ("forward", "backward", "double_backward")
# measured on BERT-like encoders, float32, CPU (peak RSS of a subprocess; docs/benchmarks.md):
FORWARD_HIDDEN = 10  # hidden-size vectors live at once in one layer under inference (10.3 base, 11 tiny)
SAVED_HIDDEN = 9  # hidden-size vectors autograd keeps per layer for input gradients (8.2 base, 9.6 tiny)
SAVED_ATTENTION = 1.5  # heads x n values kept per token and layer under eager attention (1.64 base, 1.26 tiny)
DOUBLE_FACTOR = 3.1  # double backward over backward (2.9-3.2 measured)
# bytes per activation value of float32 weights under bf16 / fp16 autocast (the fast mode): autocast keeps layer
# norms, softmax and the residual stream in float32 and casts copies for each matmul, so activations shrink far
# less than by half: measured 3.6 on BERT-base (2.6 on the tiny encoder) with bf16 on the CPU
AUTOCAST_ELEMENT = 3.5
GPU_SHARE = 0.6  # of the free device memory: the weights are already loaded; the rest is left to the allocator
CPU_SHARE = 0.5  # of the available RAM: other processes (the app, other jobs) share it
FALLBACK_RAM_GB = 4.0  # where the available RAM cannot be read


@dataclass(frozen=True)
class Shape:
    """What the memory model reads from a configuration."""

    layers: int
    hidden: int
    intermediate: int
    heads: int
    element: float  # bytes per activation value (4 float32, 2 bfloat16 / float16 weights, AUTOCAST_ELEMENT)
    quadratic: bool = True  # eager attention materializes the scores; SDPA's fused kernels do not


def _first(config, names: tuple[str, ...], default=None):
    for name in names:
        value = getattr(config, name, None)
        if value:
            return value
    return default


def shape_of(model_or_config, dtype: torch.dtype | None = None) -> Shape:
    """The shape of a model (or a transformers configuration); ``dtype``: the autocast dtype, else the weights'
    (float32 for a bare configuration). Reduced-precision weights halve the activations; autocast over float32
    weights does not (``AUTOCAST_ELEMENT``)."""
    config = getattr(model_or_config, "config", model_or_config)
    if getattr(config, "is_encoder_decoder", False):  # both stacks keep activations: count their layers together
        layers = (_first(config, ("encoder_layers", "num_layers"), 6) + _first(config, ("decoder_layers",
                  "num_decoder_layers"), 6))
    else:
        layers = _first(config, ("num_hidden_layers", "n_layer", "num_layers"), 12)
    hidden = _first(config, ("hidden_size", "d_model", "n_embd", "dim"), 1024)
    intermediate = _first(config, ("intermediate_size", "d_ff", "n_inner", "encoder_ffn_dim", "hidden_dim"),
                          4 * hidden)
    heads = _first(config, ("num_attention_heads", "n_head", "num_heads", "encoder_attention_heads"), 12)
    parameter = next(model_or_config.parameters(), None) if hasattr(model_or_config, "parameters") else None
    weights = parameter.dtype if parameter is not None else torch.float32
    element: float = torch.empty((), dtype=dtype or weights).element_size()
    if dtype is not None and weights == torch.float32 and element < 4:  # autocast: mixed precision
        element = AUTOCAST_ELEMENT
    implementation = getattr(config, "_attn_implementation", None)
    quadratic = implementation not in ("sdpa", "flash_attention_2", "flash_attention_3", "flex_attention")
    return Shape(int(layers), int(hidden), int(intermediate), int(heads), element, quadratic)


def bytes_per_token(shape: Shape, length: int, kind: str = "forward") -> float:
    """Live bytes per padded token of a batch of ``length``-token rows for one pass kind (the module's table)."""
    if kind not in PASS_KINDS:
        raise ValueError(f"Unknown pass kind '{kind}'; use one of {', '.join(PASS_KINDS)}.")
    if kind == "double_backward":
        shape = replace(shape, quadratic=True)
    attention = shape.heads * max(1, length) if shape.quadratic else 0
    forward = shape.element * (FORWARD_HIDDEN * shape.hidden + 2 * shape.intermediate + attention)
    if kind == "forward":
        return float(forward)
    backward = forward + shape.layers * shape.element * (SAVED_HIDDEN * shape.hidden + shape.intermediate
                                                          + SAVED_ATTENTION * attention)
    return float(backward if kind == "backward" else DOUBLE_FACTOR * backward)


def predicted_bytes(shape: Shape, rows: int, length: int, kind: str = "forward") -> float:
    """Peak activation bytes of one batch of ``rows`` rows of ``length`` tokens (weights not included)."""
    return rows * length * bytes_per_token(shape, length, kind)


def available_ram_bytes() -> int:
    """MemAvailable of /proc/meminfo (what the kernel can give without swapping), else a fixed guess."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(FALLBACK_RAM_GB * 2 ** 30)


def budget_bytes(device: torch.device | str) -> int:
    """The activation memory a pass may use on ``device``: EXWB_MEMORY_GB, else a share of what is free."""
    device = torch.device(device)
    gigabytes = settings.memory_gb()
    if gigabytes is not None:
        return int(gigabytes * 2 ** 30)
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(GPU_SHARE * settings.device_share() * free)
    return int(CPU_SHARE * settings.device_share() * available_ram_bytes())


def budget_tokens(shape: Shape, device: torch.device | str, length: int, kind: str = "forward",
                  budget: int | None = None) -> int:
    """Padded tokens per batch of ``length``-token rows that fit the budget (at least one row: a row is the
    smallest batch there is), and under the limit an out-of-memory error taught this process. ``budget``: bytes
    read once by a caller sizing many batches (default ``budget_bytes(device)``)."""
    budget = budget_bytes(device) if budget is None else budget
    tokens = int(budget // bytes_per_token(shape, length, kind))
    learned = learned_limit(shape, device, kind)
    if learned is not None:
        tokens = min(tokens, learned)
    return max(tokens, max(1, length))


def rows_within(shape: Shape, device: torch.device | str, length: int, kind: str, wanted: int,
                cap_tokens: int | None = None) -> int:
    """How many of ``wanted`` rows of ``length`` tokens one ``kind`` batch may hold (at least 1): the budget, and
    ``cap_tokens`` (a speed-chosen batch size, e.g. the CPU's) when given."""
    tokens = budget_tokens(shape, device, length, kind)
    if cap_tokens is not None:
        tokens = min(tokens, cap_tokens)
    return max(1, min(wanted, tokens // max(1, length)))


# ----- out of memory ------------------------------------------------------------------------------------------
OOM_WORDS = ("out of memory", "can't allocate memory", "not enough memory", "failed to allocate")
_limits: dict[tuple, int] = {}
_events: dict[tuple, list[dict]] = {}
_lock = threading.Lock()


def is_out_of_memory(error: BaseException) -> bool:
    """CUDA's OutOfMemoryError, Python's MemoryError, or the CPU allocator's RuntimeError."""
    if isinstance(error, (torch.cuda.OutOfMemoryError, MemoryError)):
        return True
    return isinstance(error, RuntimeError) and any(word in str(error).lower() for word in OOM_WORDS)


def _key(shape: Shape, device, kind: str) -> tuple:
    # the attention kernel is not part of the key: a model switches to eager and back (attack.py, attentions)
    return replace(shape, quadratic=False), str(torch.device(device)), kind


def learned_limit(shape: Shape, device, kind: str) -> int | None:
    """The padded tokens per batch this process learned from out-of-memory errors, if any."""
    with _lock:
        return _limits.get(_key(shape, device, kind))


def remember_failure(shape: Shape, device, kind: str, tokens: int, error: BaseException) -> int:
    """A ``kind`` batch of ``tokens`` padded tokens ran out of memory: the limit is now half of it; returns it."""
    key = _key(shape, device, kind)
    limit = max(1, tokens // 2)
    with _lock:
        _limits[key] = min(limit, _limits.get(key, limit))
        _events.setdefault(key, []).append({"kind": kind, "failed_tokens": int(tokens), "limit_tokens": _limits[key],
                                            "error": type(error).__name__})
        if torch.cuda.is_available() and torch.device(device).type == "cuda":
            torch.cuda.empty_cache()  # what the failed batch held goes back before the retry
        return _limits[key]


def notes_for(shape: Shape, device) -> dict | None:
    """The provenance's record of this process's out-of-memory halvings for this model shape and device."""
    with _lock:
        found = {kind: {"limit_tokens": _limits[_key(shape, device, kind)],
                        "halvings": len(_events.get(_key(shape, device, kind), []))}
                 for kind in PASS_KINDS if _key(shape, device, kind) in _limits}
    return found or None


def forget_limits() -> None:
    """Clear what this process learned (tests)."""
    with _lock:
        _limits.clear()
        _events.clear()


def run_halving(run, rows: int, length: int, shape: Shape, device, kind: str):
    """``run(rows)`` with the largest batch of at most ``rows`` rows of ``length`` tokens; on out-of-memory, the
    limit is halved, remembered, and ``run`` called again with fewer rows. ``run`` must be restartable (it does
    the whole job for a batch size; finished work it keeps elsewhere is not redone). Raises the error when one row
    does not fit."""
    while True:
        try:
            return run(rows)
        except Exception as error:  # noqa: BLE001  (only out-of-memory errors are handled; the rest re-raised)
            if not is_out_of_memory(error) or rows <= 1:
                raise
            limit = remember_failure(shape, device, kind, rows * length, error)
            rows = max(1, min(rows // 2, limit // max(1, length)))


def in_batches(items: list, rows: int, length: int, shape: Shape, device, kind: str, run_batch) -> None:
    """``run_batch(part)`` over ``items`` in parts of at most ``rows`` (rows of ``length`` tokens); on out-of-memory
    the part halves (``run_halving``) and only the items not yet done run again: finished parts are kept."""
    pending = list(items)

    def run(size: int) -> None:
        while pending:
            run_batch(pending[:size])
            del pending[:size]

    if pending:
        run_halving(run, max(1, rows), length, shape, device, kind)
