"""The opt-in fast mode: forward and backward passes under reduced-precision autocast.

bfloat16 on a CPU whose oneDNN has native bf16 kernels (AVX512-BF16 / AMX); on a GPU bfloat16 where the device
supports it, else float16. Autocast casts per operation, so the model's float32 weights stay the only copy.

The mode is never the default and never used by a metric: it is a separate classifier view
(``TextClassifier.fast_variant``) that only the explain entry points build (``cli.py explain --fast``, or EXWB_FAST=1
for it; the Heatmaps page's "Fast mode" toggle, ``ui.views.heatmaps.fast_mode``); metrics and studies load models
through ``load_classifier``, always in full precision. Each explanation made in fast mode records, in its
provenance, the measured max |dp| of its input's class probabilities against full precision.
"""
from __future__ import annotations

import torch

FULL = "float32"


def fast_dtype(device: torch.device) -> torch.dtype | None:
    """The reduced precision fast mode uses on ``device``; None where it would not be faster (a CPU without native
    bf16 kernels emulates them: slower than float32)."""
    if device.type == "cuda":  # native bf16 from Ampere on; torch's default check also counts emulated bf16 (slower)
        return torch.bfloat16 if torch.cuda.is_bf16_supported(including_emulation=False) else torch.float16
    if device.type == "cpu" and cpu_has_bf16():
        return torch.bfloat16
    return None


def dtype_name(dtype: torch.dtype) -> str:
    """'bfloat16' for torch.bfloat16: how provenance, warnings and the page name a precision."""
    return str(dtype).removeprefix("torch.")


def cpu_has_bf16() -> bool:
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def unavailable_note(device: torch.device) -> str:
    return (f"Fast mode was asked for, but this {device.type.upper()} has no native bfloat16 kernels (it would "
            f"emulate them, slower than float32): full precision is used.")


def autocast(device: torch.device, dtype: torch.dtype | None):
    """Autocast to ``dtype`` on ``device`` (a no-op context when ``dtype`` is None: full precision)."""
    return torch.autocast(device.type, dtype=dtype, enabled=dtype is not None)
