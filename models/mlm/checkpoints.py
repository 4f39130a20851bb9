"""Resumable masked-LM training: a checkpoint every ``recipe.checkpoint_every`` steps and when a run is stopped.

A checkpoint holds what the next step depends on: the weights, the optimizer's moments, the step, torch's random
state (dropout) and the CPU seconds spent so far. The batches are not stored: they are drawn from the recipe's
seed, so a resumed run draws (and skips) the ones already trained on and goes on with the same batches an
uninterrupted run would see. It is written to a temporary file first, then renamed, so a run killed while saving
keeps the previous checkpoint. The folder sits beside the model's (``<name>-<recipe hash>.checkpoint``), so a
changed recipe never resumes another recipe's run.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import torch  # noqa: E402  (runtime sets the environment first)

STATE = "state.pt"


def save_checkpoint(folder: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, step: int,
                    cpu_seconds: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / (STATE + ".partial")
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                "torch_rng": torch.get_rng_state(), "cpu_seconds": cpu_seconds}, temporary)
    temporary.replace(folder / STATE)


def load_checkpoint(folder: Path | None) -> dict | None:
    """The saved state, or None when there is none (a fresh run)."""
    if folder is None or not (folder / STATE).is_file():
        return None
    return torch.load(folder / STATE, map_location="cpu", weights_only=True)


def restore(state: dict, model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> None:
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["torch_rng"])


def remove_checkpoint(folder: Path | None) -> None:
    """After the model is saved, its run's checkpoint is no longer needed."""
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)
