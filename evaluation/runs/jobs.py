"""The job runner: a run is a list of independent cells; each finished cell lands in the result store at once.

Executors:
- ``local``: cells one after another in this process (the default; a GPU is used when there is one);
- ``processes``: windows of cells in worker processes on this machine, one torch thread each (measured: on a
  CPU the cores are used better than by one process's threads; evaluation/runs/process_executor.py);
- ``ray``: cells as Ray tasks on a cluster (``ray_address``) or a local Ray instance, so a study can use
  many GPUs. A cell's work function must depend only on its spec (and its seed), so both executors give
  the same numbers.

Finished cells (not failed ones) are skipped when a run starts again (resume after a crash, reload or cancel). Runs can be
started in a background thread (the app does this, through the job queue of evaluation/runs/scheduler.py),
polled from the store and stopped between cells.
"""
from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass, field

from evaluation.runs import process_executor
from evaluation.runs.ray_executor import run_on_ray
from evaluation.runs.scheduler import Scheduler
from evaluation.runs.store import ResultStore
from models.metering import cells_left_seconds

Work = Callable[[dict], dict]
Progress = Callable[[int, int, float | None], None]  # done, total, estimated seconds left
# Work shared by a window of cells, computed ahead (e.g. the IG paths of several inputs in one batch) and served
# while the window's cells run; results are the cells' own either way (local and processes executors)
BatchHook = Callable[[list[dict]], AbstractContextManager]
BATCH_WINDOW = 32  # cells per batch-hook window: enough inputs of one length to group, few to wait for before a result


@dataclass(frozen=True)
class Cell:
    key: str
    spec: dict


@dataclass
class RunSummary:
    run_id: str
    status: str
    done: int
    total: int
    errors: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


class CellStopped(Exception):
    """Raised inside a cell's work when its run is being stopped: the cell is left unfinished, not stored."""


_running = threading.local()
STOPPED = "__cell_stopped__"


def stop_requested() -> bool:
    """True while the run of the cell this thread is working on is being stopped (local executor), so long cells
    (a retrain, a pass over a dataset) can stop early by raising ``CellStopped``. Ray cells are cancelled instead."""
    check = getattr(_running, "should_stop", None)
    return bool(check is not None and check())


def current_stop_check() -> Callable[[], bool] | None:
    """The stop check of the run whose cell this thread is working on (local executor), for a cell that runs an
    inner run of its own (the report card's checks) and must stop with the outer one."""
    return getattr(_running, "should_stop", None)


def _eta(store: ResultStore, run_id: str, remaining: int, parallel: int = 1) -> float | None:
    """Seconds left at a cell boundary (the cost model's rule, models/metering.py)."""
    seconds = store.cell_seconds(run_id)
    if not seconds:
        return None
    left = cells_left_seconds(seconds, remaining)
    return None if left is None else left / max(1, parallel)


def _safe(work: Work, spec: dict) -> tuple[dict, float]:
    started = time.perf_counter()
    try:
        return work(spec), time.perf_counter() - started
    except CellStopped:
        return {STOPPED: True}, time.perf_counter() - started
    except Exception as error:  # one failing cell is recorded, the others go on
        return {"error": f"{type(error).__name__}: {error}", "traceback": traceback.format_exc(limit=5)}, \
            time.perf_counter() - started


EXECUTORS = ("local", "processes", "ray")


def run_cells(store: ResultStore, run_id: str, cells: list[Cell], work: Work, executor: str = "local",
              progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
              ray_address: str | None = None, ray_resources: dict | None = None,
              ray_runtime_env: dict | None = None, batch_hook: BatchHook | None = None,
              workers: int | None = None) -> RunSummary:
    """Run every unfinished cell; returns when all are done or ``should_stop()`` turns true. ``batch_hook`` (local
    and processes executors): entered around each window of ``BATCH_WINDOW`` cells with their specs. ``workers``:
    the processes executor's worker count (default ``EXWB_RUN_WORKERS``, else the usable cores)."""
    started = time.perf_counter()
    finished = {key for key, result in store.cells(run_id).items() if "error" not in result}  # failed cells rerun
    pending = [c for c in cells if c.key not in finished]
    total, done = len(cells), len(cells) - len(pending)
    store.set_status(run_id, "running")
    if progress is not None:
        progress(done, total, _eta(store, run_id, len(pending)))
    errors: dict[str, str] = {}
    try:
        stopped, done = _run_pending(store, run_id, pending, work, executor, done, total, progress, should_stop,
                                     errors, ray_address, ray_resources, ray_runtime_env, batch_hook, workers)
    except BaseException as error:  # not a cell's failure (those are recorded): the run must not read "running"
        store.set_status(run_id, "cancelled" if isinstance(error, KeyboardInterrupt) else "failed")
        raise
    status = "cancelled" if stopped else ("finished" if not errors else "finished with errors")
    store.set_status(run_id, status)
    return RunSummary(run_id, status, done, total, errors, time.perf_counter() - started)


def _run_pending(store, run_id, pending, work, executor, done, total, progress, should_stop, errors, ray_address,
                 ray_resources, ray_runtime_env, batch_hook, workers) -> tuple[bool, int]:
    stopped = False
    if executor == "local":
        size = BATCH_WINDOW if batch_hook is not None else max(1, len(pending))  # no hook: one window
        for start in range(0, len(pending), size):
            stopped, done = run_window(store, run_id, pending[start:start + size], work, batch_hook, done, total,
                                       progress, should_stop, errors)
            if stopped:
                break
    elif executor == "processes":
        stopped, done = process_executor.run_in_processes(store, run_id, pending, work, batch_hook, done, total,
                                                          progress, should_stop, errors, workers, eta=_eta,
                                                          run_window=run_window)
    elif executor == "ray":
        stopped, done = _run_on_ray(store, run_id, pending, work, done, total, progress, should_stop, errors,
                                    ray_address, ray_resources, ray_runtime_env)
    else:
        raise ValueError(f"Unknown executor '{executor}'; use one of {', '.join(EXECUTORS)}.")
    return stopped, done


def run_window(store, run_id: str, window: list[Cell], work: Work, batch_hook: BatchHook | None, done: int,
               total: int, progress: Progress | None, should_stop: Callable[[], bool] | None,
               errors: dict[str, str]) -> tuple[bool, int]:
    """One window of cells in this process, inside the batch hook; returns (stopped, done). Each cell's stored
    seconds include its share of the hook's work, so the time-left estimate counts the work done ahead."""
    with ExitStack() as shared:
        share = 0.0
        if batch_hook is not None and not (should_stop is not None and should_stop()):
            _running.should_stop = should_stop
            started = time.perf_counter()
            try:
                shared.enter_context(batch_hook([cell.spec for cell in window]))
            except CellStopped:
                return True, done
            finally:
                _running.should_stop = None
            share = (time.perf_counter() - started) / len(window)
        return _run_local(store, run_id, window, work, done, total, progress, should_stop, errors, share)


def _run_local(store, run_id, cells, work, done, total, progress, should_stop, errors,
               shared_seconds: float = 0.0) -> tuple[bool, int]:
    """Cells one after another in this process; returns (stopped, done). ``shared_seconds``: each cell's share of
    work its window's batch hook did ahead."""
    for cell in cells:
        if should_stop is not None and should_stop():
            return True, done
        _running.should_stop = should_stop
        try:
            result, seconds = _safe(work, cell.spec)
        finally:
            _running.should_stop = None
        if result.get(STOPPED):  # stopped inside the cell: nothing to store
            return True, done
        store.put_cell(run_id, cell.key, result, seconds + shared_seconds)
        if "error" in result:
            errors[cell.key] = result["error"]
        done += 1
        if progress is not None:
            progress(done, total, _eta(store, run_id, total - done))
    return False, done


def _run_on_ray(store, run_id, pending, work, done, total, progress, should_stop, errors, address, resources,
                runtime_env=None):
    """Cells as Ray tasks (evaluation/runs/ray_executor.py: address, worker environment, failures, cancelling)."""

    return run_on_ray(store, run_id, pending, work, done, total, progress, should_stop, errors, address, resources,
                      runtime_env, safe=_safe, eta=_eta)


OwnerSource = Callable[[], "str | None"]
_owner_source: list[OwnerSource] = []


def set_owner_source(source: OwnerSource) -> None:
    """Who starts a job: the app registers a function that names the browser session of the script run calling
    ``JOBS.start`` (ui/session_owner.py), so the call sites keep their signature. Without one (the command line,
    tests) jobs have no owner and are never limited."""
    _owner_source[:] = [source]


def current_owner() -> str | None:
    return _owner_source[0]() if _owner_source else None


class BackgroundJobs:
    """Runs started from the app keep going in a thread while pages reload; the store shows their progress.

    The threads are run by a ``Scheduler`` (evaluation/runs/scheduler.py): in shared mode a job may wait in a
    fair queue (status "queued") or be refused (``QuotaExceeded``, a ``UserFacingError`` the pages show)."""

    def __init__(self, scheduler: Scheduler | None = None):
        self.scheduler = scheduler or Scheduler()

    def start(self, store: ResultStore, run_id: str, cells: list[Cell], work: Work, **kwargs) -> bool:
        """Start (or queue) a run unless it is already running or queued; returns whether a new job was made.
        Raises ``QuotaExceeded`` when the calling session is over its quota (shared mode)."""
        run = store.get_run(run_id)

        def target(should_stop: Callable[[], bool]) -> None:
            run_cells(store, run_id, cells, work, **kwargs, should_stop=should_stop)

        job, new = self.scheduler.submit(run_id, target, owner=current_owner(),
                                         title=(run or {}).get("title") or run_id,
                                         on_dropped=lambda: store.set_status(run_id, "cancelled"),
                                         on_queued=lambda: store.set_status(run_id, "queued"))
        return new

    def is_running(self, run_id: str) -> bool:
        """Running or queued in this process (a Stop button and a polling progress bar make sense)."""
        return self.scheduler.is_active(run_id)

    def active(self) -> list[str]:
        """Run ids running or queued in this process."""
        return [job.run_id for job in self.scheduler.jobs()]

    def status_label(self, run: dict) -> str:
        """The run's status as a user should read it: 'queued (2nd in line)' while it waits here."""
        return self.scheduler.label(run["id"]) or run["status"]

    def stop(self, run_id: str) -> None:
        self.scheduler.stop(run_id)

    def wait(self, run_id: str, timeout: float | None = None) -> None:
        self.scheduler.wait(run_id, timeout)


JOBS = BackgroundJobs()
