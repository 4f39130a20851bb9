"""Content hash of a model's weights: part of every cache key, so a changed model never reuses old results."""
from __future__ import annotations

import hashlib

import torch


def weights_fingerprint(model: torch.nn.Module) -> str:
    digest = hashlib.sha256()
    for key, tensor in sorted(model.state_dict().items()):
        digest.update(key.encode())
        digest.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()[:16]
