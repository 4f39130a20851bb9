"""Content-addressed ROAR artifacts: removal masks and retrained weights, shared by cells and processes.

A cell's result depends only on its spec, but Recursive ROAR's step i needs the masks and the model of
step i-1. Each artifact is keyed by a hash of everything it depends on and is computed under a file lock:
a cell finds its predecessor's artifact (computed by an earlier cell, or by a parallel Ray worker that holds
the lock), or computes it itself with the same numbers. Weights are stored as the trained parameters only
(the head, or the last k blocks + head), on top of a start point that is rebuilt from the seed.

Artifacts live under ``<cache>/roar-artifacts``; on a multi-node Ray cluster point EXWB_CACHE_DIR at a
shared folder to share them across nodes (otherwise a node recomputes what it lacks).
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

import settings
from models.file_lock import exclusive


def content_key(*parts) -> str:
    payload = json.dumps(parts, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def artifact_dir() -> Path:
    folder = settings.cache_dir() / "roar-artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def locked(key: str):
    """An exclusive lock on one artifact key across processes on this machine."""
    return exclusive(artifact_dir() / f"{key}.lock")


def _atomic_write(path: Path, write) -> None:
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    write(temporary)
    temporary.replace(path)


def save_masks(key: str, masks: dict[str, list[np.ndarray]], info: dict | None = None) -> None:
    """Removal masks per split (lists of bool arrays of varying length), plus a small JSON record."""
    path = artifact_dir() / f"{key}.masks.json"
    data = {"masks": {split: ["".join("1" if x else "0" for x in mask) for mask in rows]
                      for split, rows in masks.items()}, "info": info or {}}
    _atomic_write(path, lambda p: p.write_text(json.dumps(data)))


def load_masks(key: str) -> tuple[dict[str, list[np.ndarray]], dict] | None:
    path = artifact_dir() / f"{key}.masks.json"
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text())
        masks = {split: [np.array([c == "1" for c in row], dtype=bool) for row in rows]
                 for split, rows in data["masks"].items()}
    except (ValueError, KeyError, OSError):
        return None  # a damaged artifact is recomputed
    return masks, data.get("info", {})


def save_result(key: str, result: dict) -> None:
    path = artifact_dir() / f"{key}.result.json"
    _atomic_write(path, lambda p: p.write_text(json.dumps(result, default=str)))


def load_result(key: str) -> dict | None:
    path = artifact_dir() / f"{key}.result.json"
    try:
        return json.loads(path.read_text()) if path.is_file() else None
    except (ValueError, OSError):
        return None


def save_weights(key: str, state: dict) -> None:
    import torch

    path = artifact_dir() / f"{key}.weights.pt"
    _atomic_write(path, lambda p: torch.save({k: v.detach().cpu() for k, v in state.items()}, p))


def load_weights(key: str) -> dict | None:
    import torch

    path = artifact_dir() / f"{key}.weights.pt"
    if not path.is_file():
        return None
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception:  # noqa: BLE001  (a damaged file is recomputed)
        return None
