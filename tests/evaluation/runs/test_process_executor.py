"""The processes executor: windows of cells in spawned worker processes give the local executor's numbers,
store each cell as it finishes, stop between cells and resume, and record a dead worker's cells as failed cells that
the next start computes."""
from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv

from evaluation.runs import process_executor
from evaluation.runs.jobs import Cell, run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite.runner import run_evaluation
from evaluation.summary import results_frame


def square_cell(spec: dict) -> dict:
    """A cell that takes a moment and says which process computed it (module level: workers import it)."""
    if spec.get("die") and not os.path.exists(spec["die"]):
        open(spec["die"], "w").close()  # dies once: the resumed run computes the cell
        os._exit(3)
    if spec.get("fail"):
        raise ValueError("this cell fails")
    time.sleep(spec.get("sleep", 0.0))
    return {"value": spec["i"] ** 2, "pid": os.getpid(), "threads": os.environ.get("EXWB_THREADS")}


def cells(n: int, **extra) -> list[Cell]:
    return [Cell(f"c{i}", {"i": i, **extra}) for i in range(n)]


def test_windows_shrink_towards_the_end_so_no_worker_waits_for_a_long_last_one(monkeypatch):
    sizes = process_executor.window_sizes(872, 2, 32)
    assert sum(sizes) == 872 and sizes[:20] == [32] * 20 and sizes == sorted(sizes, reverse=True)
    assert sizes[-3:] == [1, 1, 1]
    for index, size in enumerate(sizes):  # each a quarter of what is left per worker, at most 32
        assert size == max(1, min(32, -(-(872 - sum(sizes[:index])) // 8)))
    assert process_executor.window_sizes(20, 2, 32)[0] == 3  # ceil(20 / 8)
    assert process_executor.window_sizes(1, 4, 32) == [1]
    monkeypatch.setenv("EXWB_RUN_WORKERS", "3")
    assert process_executor.default_workers() == 3
    monkeypatch.setenv("EXWB_RUN_WORKERS", "zero")
    with pytest.raises(ValueError, match="EXWB_RUN_WORKERS"):
        process_executor.default_workers()
    monkeypatch.setenv("EXWB_CACHE_DIR", "/somewhere/cache")
    env = process_executor.worker_environment(2)
    assert env["EXWB_CACHE_DIR"] == "/somewhere/cache" and env["HF_HUB_OFFLINE"] in ("1", os.environ.get(
        "HF_HUB_OFFLINE")) and int(env["EXWB_THREADS"]) >= 1


@pytest.mark.slow  # worker processes start, each importing torch
def test_cells_run_in_workers_and_a_failing_cell_is_recorded(tmp_path):
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("test", {"n": 9}, total=9, title="squares")
    work = cells(8) + [Cell("bad", {"i": 0, "fail": True})]
    seen = []
    summary = run_cells(store, run_id, work, square_cell, executor="processes", workers=2,
                        progress=lambda done, total, left: seen.append((done, total)))
    assert summary.status == "finished with errors" and summary.done == 9
    assert summary.errors == {"bad": "ValueError: this cell fails"}
    stored = store.cells(run_id)
    assert {k: v["value"] for k, v in stored.items() if k != "bad"} == {f"c{i}": i * i for i in range(8)}
    pids = {v["pid"] for k, v in stored.items() if k != "bad"}
    assert os.getpid() not in pids and len(pids) == 2  # both workers took windows
    assert {v["threads"] for k, v in stored.items() if k != "bad"} == {str(max(1, len(os.sched_getaffinity(0)) // 2))}
    assert seen[-1] == (9, 9) and [d for d, _ in seen if d] == list(range(1, 10))  # one report per cell


@pytest.mark.slow  # worker processes start, each importing torch
def test_a_stopped_run_keeps_its_cells_and_resumes(tmp_path):
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("test", {"n": 40}, total=40, title="squares")
    stop = threading.Event()

    def progress(done, total, left):
        if done >= 4:
            stop.set()

    first = run_cells(store, run_id, cells(40, sleep=0.15), square_cell, executor="processes", workers=2,
                      progress=progress, should_stop=stop.is_set)
    assert first.status == "cancelled" and 4 <= first.done < 40
    kept = store.cells(run_id)
    assert len(kept) == first.done and all(v["value"] == int(k[1:]) ** 2 for k, v in kept.items())
    second = run_cells(store, run_id, cells(40, sleep=0.0), square_cell, executor="processes", workers=2)
    assert second.status == "finished" and second.done == 40
    final = store.cells(run_id)
    assert {k: v["value"] for k, v in final.items()} == {f"c{i}": i * i for i in range(40)}
    assert all(final[k]["pid"] == v["pid"] for k, v in kept.items())  # kept cells were not computed again


@pytest.mark.slow  # worker processes start, each importing torch
def test_a_dead_worker_leaves_failed_cells_that_the_next_start_computes(tmp_path):
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("test", {"n": 6}, total=6, title="squares")
    marker = str(tmp_path / "died-once")
    work = cells(5) + [Cell("dies", {"i": 7, "die": marker})]
    first = run_cells(store, run_id, work, square_cell, executor="processes", workers=2)
    assert first.status == "finished with errors" and "dies" in first.errors
    assert "worker process stopped" in first.errors["dies"] and "start the run again" in first.errors["dies"]
    second = run_cells(store, run_id, work, square_cell, executor="processes", workers=2)
    assert second.status == "finished" and not second.errors
    assert {k: v["value"] for k, v in store.cells(run_id).items()} == {**{f"c{i}": i * i for i in range(5)},
                                                                      "dies": 49}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, random_classifier):
    """Random weights: no two words tie exactly (the keyword model ties its neutral words, and float rounding of
    one thread against two would decide their order)."""
    root = tmp_path_factory.mktemp("processes")
    folder = save_keyword_model(random_classifier, root / "model")
    return folder, write_keyword_csv(root / "data.csv", 10, seed=5)


@pytest.mark.slow  # worker processes start, each importing torch
def test_an_evaluation_gives_the_local_executors_numbers(tiny, tmp_path, monkeypatch):
    """The batch hook (IG paths of a window in one batch), the explanation cache and every metric run in the
    workers; each worker and the local run have their own cache, so nothing is shared but the code."""
    from explainers.cache import DEFAULT_CACHE

    folder, data = tiny
    arguments = dict(methods=["input_x_gradient", "integrated_gradients", "leave_one_out"],
                     evaluators=["eraser", "naopc"],
                     options={"random_orderings": 0})
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "workers-cache"))
    monkeypatch.setenv("EXWB_DISK_CACHE", "1")
    store, summary = run_evaluation(str(folder), data, store=ResultStore(tmp_path / "p.sqlite"),
                                    executor="processes", workers=2, **arguments)
    assert summary.status == "finished" and summary.done == 10
    assert (tmp_path / "workers-cache" / "explanations").is_dir()  # the workers used the cache they were given
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "local-cache" / "explanations")
    DEFAULT_CACHE.clear()
    local_store, local = run_evaluation(str(folder), data, store=ResultStore(tmp_path / "l.sqlite"), **arguments)
    assert local.status == "finished"
    DEFAULT_CACHE.clear()
    key = ["example_id", "method", "metric"]
    ours = results_frame(store, summary.run_id).sort_values(key).reset_index(drop=True)
    theirs = results_frame(local_store, local.run_id).sort_values(key).reset_index(drop=True)
    assert len(ours) == len(theirs) > 0 and ours[key].equals(theirs[key])
    # The workers' windows batch other inputs together (other padded widths), so logits differ in float32 rounding.
    # NAOPC divides by its bounds' gap, small on this random model: its rounding grows with 1 / gap (5.6e-5 seen
    # on an AVX-512 CPU); a beam that ranked differently moved a value by 0.015, which this still catches.
    tolerance = np.where(ours["metric"].str.startswith("naopc"), 2e-4, 1e-5)
    differ = ~np.isclose(ours["value"], theirs["value"], rtol=0, atol=tolerance, equal_nan=True)
    assert not differ.any(), ours[differ].assign(local=theirs["value"][differ]).to_string()


@pytest.mark.slow  # worker processes start, each importing torch
def test_the_command_line_runs_with_worker_processes(tiny, capsys):
    import json

    import cli

    folder, data = tiny
    argv = ["evaluate", "--model", str(folder), "--dataset", data, "--methods", "saliency", "--metrics", "eraser",
            "--limit", "4", "--random-orderings", "0", "--json"]
    assert cli.main(argv + ["--executor", "processes", "--workers", "2"]) == 0
    report = json.loads(capsys.readouterr().out)
    rows = {row["metric"]: row for row in report["summary"]}
    assert rows["comprehensiveness-eraser"]["n"] == 4
    assert cli.main(argv + ["--executor", "processes", "--workers", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "--workers" in err and "Traceback" not in err


@contextmanager
def slow_hook(specs):
    time.sleep(0.1 * len(specs))  # work done ahead for the window: 0.1 s per cell
    yield


def test_a_cells_seconds_include_its_share_of_the_window_hook(tmp_path):
    """The time-left estimate reads the stored seconds: work a batch hook did ahead (IG paths, NAOPC bounds) is
    spread over the window's cells, or a run's estimate would leave it out (it was 2x short on SST-2)."""
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("test", {"n": 3}, total=3, title="squares")
    assert run_cells(store, run_id, cells(3), square_cell, batch_hook=slow_hook).status == "finished"
    assert len(store.cell_seconds(run_id)) == 3 and min(store.cell_seconds(run_id)) >= 0.1


def spin_cell(spec: dict) -> dict:
    """A cell that uses ``spin`` CPU seconds in its worker process (module level: workers import it)."""
    cpu = time.process_time()
    while time.process_time() - cpu < spec["spin"]:
        pass
    return {"value": spec["i"]}


@pytest.mark.slow  # worker processes start, each importing torch
def test_the_workers_cpu_counts_for_the_job_that_started_them(tmp_path):
    """a job's CPU quota counts its worker processes (each reports its process CPU with each window)."""
    from evaluation.runs.scheduler import Limits, Scheduler

    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run("test", {"n": 4}, total=4, title="spin")
    scheduler = Scheduler(Limits(enforce=True, slots=2, running=2, queued=3, cpu_seconds=0))
    own = {}

    def job(should_stop):
        start = time.thread_time()
        run_cells(store, run_id, cells(4, spin=0.25), spin_cell, executor="processes", workers=2)
        own["thread"] = time.thread_time() - start

    scheduler.submit(run_id, job, owner="A")
    assert scheduler.wait(run_id, 120)
    assert len(store.cells(run_id)) == 4
    charged = scheduler.cpu_last_hour("A") - own["thread"]
    assert charged >= 4 * 0.25  # the cells' CPU, plus each worker's start-up, none of it on the job's thread


def test_workers_start_with_the_runtime_variables_and_the_parent_gets_its_environment_back(monkeypatch):
    """A library user never ran prepare_runtime: the variables are there while workers start, and gone after."""
    import settings
    from evaluation.runs.process_executor import launch_environment

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    before = dict(os.environ)
    env = settings.runtime_environment()
    assert env["OMP_WAIT_POLICY"] == "PASSIVE"
    with launch_environment(env):
        assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    assert dict(os.environ) == before
