"""The processes executor on GPUs: each worker its own GPU and its share of that GPU's memory budget.

The assignment is a pure function of the device setting and the visible GPUs; what a worker actually sees is checked
through a real process pool: CUDA_VISIBLE_DEVICES names GPUs by id, and a spawned worker on this CPU-only machine
reads the variables it was given without any CUDA (a GPU-less torch never starts a driver that would ignore them)."""
from __future__ import annotations

import os

import pytest

from evaluation.runs import worker_devices
from evaluation.runs.jobs import Cell, run_cells
from evaluation.runs.store import ResultStore
from evaluation.runs.worker_devices import Placement, environment_for, plan


@pytest.fixture(autouse=True)
def whole_device(monkeypatch):
    monkeypatch.delenv("EXWB_DEVICE_SHARE", raising=False)
    monkeypatch.delenv("EXWB_RUN_WORKERS", raising=False)


def test_workers_take_the_gpus_round_robin_and_split_each_ones_budget():
    placed = plan(3, "cuda", ["0", "1"])
    assert [(p.gpu, p.ordinal) for p in placed] == [("0", 0), ("1", 1), ("0", 0)]
    assert [p.share for p in placed] == [0.5, 1.0, 0.5]  # two workers on GPU 0 size batches from half of it each
    assert [p.share for p in plan(4, "auto", ["7"])] == [0.25] * 4  # auto with a GPU: the GPU
    assert plan(2, "cuda:1", ["3", "5"]) == [Placement("5", 1, 0.5)] * 2  # the card the user named, shared
    assert plan(2, "cpu", ["0"]) == [None, None]
    assert plan(2, "auto", []) == [None, None]  # no GPU: the CPU
    assert plan(2, "cuda:4", ["0"]) == [None, None]  # left to runtime.choose_device's message


def test_on_gpus_the_default_is_one_worker_per_gpu_used(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3,4")
    assert worker_devices.gpu_workers("cuda") == 3
    assert worker_devices.gpu_workers("cuda:2") == 1
    assert worker_devices.gpu_workers("cpu") == 0  # the CPU: the cores decide (process_executor.default_workers)


def test_a_process_with_half_a_gpu_gives_each_worker_its_part_of_that_half(monkeypatch):
    monkeypatch.setenv("EXWB_DEVICE_SHARE", "0.5")
    assert [p.share for p in plan(2, "cuda", ["0"])] == [0.25, 0.25]


def test_visible_gpus_follow_cuda_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2, GPU-8f3a,4")
    assert worker_devices.visible_gpus() == ["2", "GPU-8f3a", "4"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,-1,3")  # CUDA stops at the first invalid entry
    assert worker_devices.visible_gpus() == ["1"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert worker_devices.visible_gpus() == []


def test_a_worker_is_isolated_on_its_gpu_or_named_in_the_parents_numbering():
    placement = Placement("5", 1, 0.5)
    assert environment_for(placement) == {"EXWB_DEVICE": "cuda", "CUDA_VISIBLE_DEVICES": "5",
                                          "EXWB_DEVICE_SHARE": "0.5"}
    assert environment_for(placement, isolated=False) == {"EXWB_DEVICE": "cuda:1", "EXWB_DEVICE_SHARE": "0.5"}
    assert environment_for(None) == {}


def seen_device(spec: dict) -> dict:
    """A cell's work (module level: workers import it): what its worker process was given, as the model loader and
    the memory budget read it."""
    import time

    import settings

    time.sleep(0.3)  # long enough that every worker takes cells
    return {"pid": os.getpid(), "visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "device": settings.device_setting(), "share": settings.device_share()}


def run_placement(tmp_path, n_cells: int = 8, workers: int | None = 2) -> list[dict]:
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("placement", {}, n_cells)
    cells = [Cell(f"c{i}", {"i": i}) for i in range(n_cells)]
    summary = run_cells(store, run_id, cells, seen_device, executor="processes", workers=workers)
    assert summary.status == "finished", summary.errors
    return list(store.cells(run_id).values())


@pytest.mark.slow
def test_each_worker_process_sees_only_its_own_gpu_and_its_share(tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_DEVICE", "cuda")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,5")  # the parent's GPUs, by id
    cells = run_placement(tmp_path)
    by_worker = {cell["pid"]: (cell["visible"], cell["device"], cell["share"]) for cell in cells}
    assert sorted(by_worker.values()) == [("3", "cuda", 1.0), ("5", "cuda", 1.0)]  # one GPU each, whole


@pytest.mark.slow
def test_workers_on_one_gpu_each_size_batches_from_their_share(tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_DEVICE", "cuda:0")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "6,7")
    cells = run_placement(tmp_path)
    assert {(cell["visible"], cell["device"], cell["share"]) for cell in cells} == {("6", "cuda", 0.5)}
    assert len({cell["pid"] for cell in cells}) == 2
