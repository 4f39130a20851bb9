"""The processes executor on a real CUDA machine (marked ``gpu``: skipped without CUDA, run by
bench/gpu_check.sh): each worker process sees its own GPU (CUDA_VISIBLE_DEVICES set before its CUDA driver started,
else the explicit cuda:i of the parent's numbering) and sizes its batches from its share of that GPU."""
from __future__ import annotations

import os

import pytest
import torch

from evaluation.runs.jobs import Cell, run_cells
from evaluation.runs.store import ResultStore

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: bench/gpu_check.sh runs these on a GPU machine")]


def worker_device(spec: dict) -> dict:
    """A cell's work (module level: workers import it): the device its worker places models on, as it sees it."""
    import time

    import settings
    from models import memory, runtime

    device = runtime.choose_device()
    torch.zeros(1, device=device)  # a real allocation on that device
    time.sleep(0.5)  # every worker takes cells
    return {"pid": os.getpid(), "device": str(device), "setting": settings.device_setting(),
            "visible": os.environ.get("CUDA_VISIBLE_DEVICES"), "count": torch.cuda.device_count(),
            "share": settings.device_share(), "name": torch.cuda.get_device_name(device),
            "budget": memory.budget_bytes(device)}


def test_each_worker_places_its_models_on_its_own_gpu_with_its_share(tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_DEVICE", "cuda")
    monkeypatch.delenv("EXWB_DEVICE_SHARE", raising=False)
    monkeypatch.delenv("EXWB_MEMORY_GB", raising=False)
    gpus = torch.cuda.device_count()
    workers = 2 * gpus  # two workers on each GPU: each gets half its budget
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("placement", {}, 4 * workers)
    cells = [Cell(f"c{i}", {"i": i}) for i in range(4 * workers)]
    summary = run_cells(store, run_id, cells, worker_device, executor="processes", workers=workers)
    assert summary.status == "finished", summary.errors
    seen = {cell["pid"]: cell for cell in store.cells(run_id).values()}
    for cell in seen.values():
        assert cell["share"] == 0.5
        if cell["setting"] == "cuda":  # isolated: the worker sees one GPU only
            assert cell["count"] == 1 and cell["device"].startswith("cuda")
        else:  # the driver had started before the variable could count: the parent's numbering
            assert cell["setting"].startswith("cuda:") and cell["count"] == gpus
        _free, total = torch.cuda.mem_get_info(0)
        assert cell["budget"] <= 0.6 * 0.5 * total  # half of a share of one card, never the whole card
    print({pid: (c["setting"], c["visible"], c["name"]) for pid, c in seen.items()})
