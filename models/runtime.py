"""Process-level runtime choices: device, torch threads, library versions for provenance."""
from __future__ import annotations

import platform
from functools import lru_cache

import numpy
import torch
import transformers

import settings
from models import memory
from models.errors import ModelError

# No process environment is set here: importing the library must leave a notebook's os.environ alone.
# The entry points (cli.py, app.py, the worker processes) call settings.prepare_runtime() before torch is imported;
# offline loading is the loaders' own choice (local_files_only unless settings.allow_hub()).


def configure_torch() -> None:
    threads = settings.torch_threads()
    if threads:
        torch.set_num_threads(threads)
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()


def choose_device(requested: str | None = None) -> torch.device:
    """``auto`` -> CUDA when available, else CPU; anything else is passed to torch.device."""
    requested = requested or settings.device_setting()
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device(requested)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ModelError(f"Device '{requested}' was asked for (EXWB_DEVICE) but CUDA is not available here; "
                         f"use EXWB_DEVICE=auto or cpu.")
    return device


def full_last_layer() -> bool:
    """EXWB_FULL_LAST_LAYER=1: encoders compute their last layer for every token, as the model itself does (for
    comparisons; the default computes it for the first token only, models/first_token.py). Read when a model loads."""
    return settings.full_last_layer()


CPU_BATCH_TOKENS = 2_048  # padded tokens per batch: measured fastest on the 2-core CPU (8 192 was slower)
GPU_BATCH_TOKENS = 262_144  # more gains nothing on a GPU (kernels are saturated long before)
TYPICAL_LENGTH = 512  # the row length forward budgets assume (the longest input most models read)


def batch_tokens_for(model, device: torch.device) -> int:
    """Padded tokens per forward batch: what the memory budget holds (models/memory.py, EXWB_MEMORY_GB); on a CPU
    at most the measured fastest size, on a GPU at most GPU_BATCH_TOKENS."""
    tokens = memory.budget_tokens(memory.shape_of(model), device, TYPICAL_LENGTH, "forward")
    if device.type != "cuda":
        return min(CPU_BATCH_TOKENS, tokens)
    return min(tokens, GPU_BATCH_TOKENS)


@lru_cache(maxsize=1)
def library_versions() -> dict[str, str]:
    import captum  # deferred: nothing else in models/ needs captum (a heavy import); provenance reads its version

    return {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "captum": captum.__version__, "numpy": numpy.__version__}


configure_torch()
