"""Which attention kernel a model runs: SDPA for every forward pass, eager only while attention weights are read.

PyTorch's fused scaled-dot-product attention (SDPA) gives the same outputs as the eager kernel within float32
rounding and is faster (measured: 1.15x on the 2-core CPU, max |dp| 6e-7), but it returns no attention weights.
So a classifier switches its one model object to SDPA when it is built (``prefer_sdpa``) and back to eager only
around the calls that read weights (``eager_attention``): the implementation is a flag on the model's config that
transformers reads at every forward, so no weights are copied.

The switch is per model object and counted: while any thread reads attention weights the model stays eager (the
other threads' passes then run the eager kernel, equal within float32 rounding), and the last reader restores SDPA.
A model that cannot switch (a custom attention, DeBERTa-v2, ...) stays on the kernel it was loaded with, and so do
the T5 family: their unscaled scores plus a relative-position bias make SDPA's gradients differ from eager by 2e-4
(relative) on the tiny test model, beyond float32 rounding.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

import torch

EAGER, SDPA = "eager", "sdpa"
EAGER_ONLY = {"t5", "mt5", "umt5"}  # model types kept on eager (see above)

_lock = threading.Lock()
# per model object reading weights now: [readers, the implementation to restore when the last one is done]
_eager_readers: weakref.WeakKeyDictionary[torch.nn.Module, list] = weakref.WeakKeyDictionary()


def _switchable(model: torch.nn.Module):
    """The transformers model inside ``model`` whose attention kernel can be set (``model`` itself, or the causal LM
    a prompted classifier wraps); None when there is none."""
    for module in model.modules():
        if hasattr(module, "set_attn_implementation") and hasattr(module, "config"):
            return module
    return None


def attention_implementation(model: torch.nn.Module) -> str | None:
    owner = _switchable(model)
    return getattr(owner.config, "_attn_implementation", None) if owner is not None else None


def _set(model: torch.nn.Module, implementation: str) -> bool:
    """Switch the kernel; False when this architecture cannot run ``implementation`` (it keeps its own)."""
    owner = _switchable(model)
    if owner is None or owner.config._attn_implementation == implementation:
        return owner is not None
    if implementation == SDPA and (not getattr(owner, "_supports_sdpa", False)
                                   or getattr(owner.config, "model_type", None) in EAGER_ONLY):
        return False
    try:
        owner.set_attn_implementation(implementation)
    except (ValueError, ImportError):  # transformers refuses a kernel the architecture lacks
        return False
    return owner.config._attn_implementation == implementation


def prefer_sdpa(model: torch.nn.Module) -> str | None:
    """Run ``model`` with SDPA where its architecture has it (eager for EAGER_ONLY, whatever it was built with);
    returns the implementation now in use."""
    owner = _switchable(model)
    keep_eager = owner is not None and getattr(owner.config, "model_type", None) in EAGER_ONLY
    with _lock:
        if model not in _eager_readers:
            _set(model, EAGER if keep_eager else SDPA)
    return attention_implementation(model)


@contextmanager
def eager_attention(model: torch.nn.Module):
    """Inside: ``model`` runs the eager kernel, so ``output_attentions=True`` returns the weights."""
    with _lock:
        state = _eager_readers.get(model)
        if state is None:
            state = _eager_readers[model] = [0, attention_implementation(model)]
            if state[1] not in (EAGER, None):
                _set(model, EAGER)
        state[0] += 1
    try:
        yield
    finally:
        with _lock:
            state[0] -= 1
            if state[0] == 0:
                del _eager_readers[model]
                if state[1] not in (EAGER, None):
                    _set(model, state[1])
