"""Seeded randomness for stochastic methods (LIME, KernelSHAP, Shapley sampling, SmoothGrad, GradientSHAP).

Captum draws its samples from global random generators: torch's (Lime, KernelShap, ShapleyValueSampling,
NoiseTunnel) and numpy's (GradientShap's path points and baselines). ``seeded(seed)`` seeds torch, numpy and
Python's generators, restores their previous states afterwards, and holds a process-wide lock meanwhile, so
the same seed gives the same samples even when several app sessions explain at once.
"""
from __future__ import annotations

import random
import threading
from contextlib import contextmanager

import numpy as np
import torch

from explainers.params import param

_LOCK = threading.RLock()


def _cuda_devices() -> list[int]:
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        return list(range(torch.cuda.device_count()))
    return []


@contextmanager
def seeded(seed: int):
    """Run the enclosed block with torch's generators seeded to ``seed`` (restored afterwards)."""
    with _LOCK, torch.random.fork_rng(devices=_cuda_devices()):
        numpy_state, python_state = np.random.get_state(), random.getstate()
        torch.manual_seed(int(seed))
        np.random.seed(int(seed) % 2**32)
        random.seed(int(seed))
        try:
            yield
        finally:
            np.random.set_state(numpy_state)
            random.setstate(python_state)


def seed_param_help(what: str) -> str:
    return f"Seed of the random {what}; the same seed gives identical scores (stored in the provenance)."


def seed_param(what: str):
    """The ``seed`` option of every stochastic method's Params (what it seeds: "coalitions", "permutations", ...)."""
    return param(0, "Seed", seed_param_help(what), min=0, max=2**31 - 1)
