"""Which device each worker process of the processes executor uses.

On a CPU the workers share the cores (``process_executor.worker_environment``). On GPUs each worker gets one GPU of
those this process sees, round-robin, and its share of that GPU's memory budget (``EXWB_DEVICE_SHARE``, read by
``models/memory.py``), so two workers on one card each size their batches from half of it instead of both from the
whole card. The rule:

- ``EXWB_DEVICE=cpu``, or ``auto`` where no GPU is visible: no device variables (the workers run on the CPU);
- ``EXWB_DEVICE=cuda``, or ``auto`` with GPUs: worker i gets GPU i mod n of the n visible ones;
- ``EXWB_DEVICE=cuda:k``: every worker on GPU k (the user chose one card), sharing it;
- the share of a GPU is this process's own share (``EXWB_DEVICE_SHARE``, e.g. from Ray) over its workers on it.

A worker sees only its GPU (``CUDA_VISIBLE_DEVICES`` = that GPU, ``EXWB_DEVICE=cuda``), the way Ray isolates a
task's GPUs, so nothing it runs can allocate on another card. ``CUDA_VISIBLE_DEVICES`` only counts when it is set
before the CUDA driver starts in that process; a worker where something already started it gets the explicit
``cuda:i`` of the parent's numbering instead (``environment_for``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch

import settings

ON_CPU = {"EXWB_DEVICE": "cpu"}  # a worker without a placement: never on a card another worker was given


@dataclass(frozen=True)
class Placement:
    """One worker's GPU: ``gpu`` its id as CUDA_VISIBLE_DEVICES names it, ``ordinal`` its index among the GPUs
    this process sees (``cuda:ordinal`` here), ``share`` its share of that GPU's memory budget."""

    gpu: str
    ordinal: int
    share: float


def visible_gpus() -> list[str]:
    """The GPUs this process sees, by the ids CUDA_VISIBLE_DEVICES gives them (indices when it is not set)."""
    listed = os.environ.get("CUDA_VISIBLE_DEVICES")
    if listed is not None:
        ids = [part.strip() for part in listed.split(",") if part.strip()]
        # CUDA stops at the first invalid entry: "-1" (a common way to hide every GPU) and what follows it
        return ids[:next((i for i, part in enumerate(ids) if part.startswith("-")), len(ids))]
    return [str(i) for i in range(torch.cuda.device_count())] if torch.cuda.is_available() else []


def plan(workers: int, device: str | None = None, gpus: list[str] | None = None) -> list[Placement | None]:
    """One placement per worker (None: the CPU) for the ``device`` setting (default EXWB_DEVICE) and the visible
    ``gpus`` (default ``visible_gpus()``)."""
    device = (device or settings.device_setting()).strip()
    if device == "cpu" or not (device == "auto" or device.startswith("cuda")):
        return [None] * workers
    gpus = visible_gpus() if gpus is None else gpus
    if not gpus:  # auto: the CPU; cuda without a GPU: the worker's own check says so (runtime.choose_device)
        return [None] * workers
    if ":" in device:
        index = device.split(":", 1)[1]
        if not index.isdigit() or int(index) >= len(gpus):
            return [None] * workers  # left to runtime.choose_device, whose message names the device
        ordinals = [int(index)] * workers
    else:
        ordinals = [i % len(gpus) for i in range(workers)]
    share = settings.device_share()
    return [Placement(gpus[o], o, share / ordinals.count(o)) for o in ordinals]


def gpu_workers(device: str | None = None) -> int:
    """The default worker count on GPUs: one per GPU used (0 where the workers run on the CPU). More workers than
    GPUs only split each card's memory: kernels on one GPU already run in parallel."""
    placements = plan(1, device)
    if placements[0] is None:
        return 0
    device = (device or settings.device_setting()).strip()
    return 1 if ":" in device else len(visible_gpus())


def environment_for(placement: Placement | None, isolated: bool = True) -> dict[str, str]:
    """The variables a worker sets for its placement. ``isolated``: CUDA_VISIBLE_DEVICES names its GPU (else the
    parent's numbering, ``cuda:ordinal``, where the driver started before the variable could count)."""
    if placement is None:
        return {}
    env = {"EXWB_DEVICE_SHARE": f"{placement.share:g}"}
    if not isolated:
        return {**env, "EXWB_DEVICE": f"cuda:{placement.ordinal}"}
    return {**env, "EXWB_DEVICE": "cuda", "CUDA_VISIBLE_DEVICES": placement.gpu}


def place_this_worker(placement: Placement | None) -> dict[str, str]:
    """In a worker, before any model loads: set its placement's variables; returns them. When the CUDA driver had
    already started in this process (it reads CUDA_VISIBLE_DEVICES once), the worker still sees every GPU: it then
    names its GPU as ``cuda:ordinal`` instead."""
    inherited = os.environ.get("CUDA_VISIBLE_DEVICES")
    env = environment_for(placement)
    os.environ.update(env)
    if placement is not None and torch.cuda.is_available() and torch.cuda.device_count() != 1:
        env = environment_for(placement, isolated=False)
        if inherited is None:  # the numbering the ordinal counts in, for a reader (the driver reads it no more)
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = inherited
        os.environ.update(env)
    return env
