"""The processes executor of the job runner: windows of cells in worker processes on this machine.

Why: on a CPU, torch's intra-op threads share one small operation between cores and wait for each
other; two processes with one thread each keep both cores busy (measured 0.78x the wall time of one process
with two threads on 40 SST-2 sentences, docs/benchmarks.md).

- Workers are spawned (not forked: a forked torch with threads can hang) with the parent's environment,
  ``EXWB_THREADS`` set to the cores each may use, and load the model themselves (one copy per worker).
- On GPUs (``EXWB_DEVICE=cuda``, or ``auto`` with GPUs) each worker gets its own GPU, round-robin, and its share of
  that GPU's memory budget (evaluation/runs/worker_devices.py); the default worker count is then one per GPU.
- A window of cells (up to ``BATCH_WINDOW``, shrinking towards the end of the run: ``window_sizes``) runs in one
  worker inside the run's batch hook, exactly as the local executor runs it, so the numbers are the same.
- Each finished cell travels back through a queue and is stored by the parent at once: a crash or a stop loses
  only the cells that were running. Stopping sets an event the workers check between cells and inside them
  (``jobs.stop_requested``); windows not started are cancelled.
- A worker that dies (out of memory, killed) leaves its unreported cells as errors, which the next start of the
  run computes again; the other workers' cells are kept.
"""
from __future__ import annotations

import math
import multiprocessing
import os
import queue as queue_module
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import TYPE_CHECKING

import settings
from evaluation.runs import worker_devices
from evaluation.runs.scheduler import charge_cpu
from models import runtime

if TYPE_CHECKING:
    from multiprocessing.synchronize import Event

PASSED_PREFIXES = ("EXWB_", "HF_", "OMP_", "TOKENIZERS_", "TRANSFORMERS_", "XDG_")

_queue = None  # set in each worker by ``_start_worker``
_stop: Event | None = None


def default_workers() -> int:
    """``EXWB_RUN_WORKERS``, else the cores this process may use."""
    value = settings.run_workers()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"EXWB_RUN_WORKERS must be a whole number of at least 1, not '{value}'.")
        return int(value)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def worker_environment(workers: int) -> dict[str, str]:
    """The settings a worker runs with: the parent's, and its share of the cores as torch threads."""
    env = {k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIXES)}
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    env["EXWB_THREADS"] = str(max(1, cores // workers))
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    return env


def window_sizes(pending: int, workers: int, largest: int) -> list[int]:
    """Guided windows: each a quarter of the remaining cells' share per worker, at most ``largest`` (the batch hook
    groups a window's inputs, so larger is better) and shrinking towards the end, so no worker runs a long last window
    while the others wait (with fixed windows of 32, one SST-2 window is a minute of one core)."""
    sizes, left = [], pending
    while left > 0:
        size = max(1, min(largest, math.ceil(left / (4 * workers))))
        sizes.append(size)
        left -= size
    return sizes


class _QueueStore:
    """What ``jobs.run_window`` needs of a store, in a worker: each finished cell goes to the parent at once (for
    progress, and so a stop or crash loses little), and again with the window's result, which arrives for sure
    (the queue's sending thread can die with its process before it sends)."""

    def __init__(self, channel) -> None:
        self.channel = channel
        self.results: list[tuple[str, dict, float]] = []

    def put_cell(self, run_id: str, key: str, result: dict, seconds: float) -> None:
        self.channel.put((key, result, seconds))
        self.results.append((key, result, seconds))


def _start_worker(env: dict[str, str], channel, stop, placements) -> None:
    global _queue, _stop
    os.environ.update(env)
    try:  # this worker's GPU and share of it: one placement per worker, taken as each one starts
        worker_devices.place_this_worker(placements.get(timeout=5))
    except queue_module.Empty:  # more workers started than placed: the CPU, never a card another worker was given
        os.environ.update(worker_devices.ON_CPU)
    runtime.configure_torch()  # the thread count of the environment just set
    _queue, _stop = channel, stop


def _run_window(run_window, run_id: str, cells: list, work, batch_hook) -> tuple[bool, list, int, float]:
    """In a worker: ``run_window`` is ``jobs.run_window`` (passed by the caller, pickled by name: no import cycle).
    Returns (stopped, results, this worker's pid, its process CPU seconds so far: every thread, model loading
    included), so the job's CPU quota counts the workers (evaluation/runs/scheduler.py)."""
    if _stop is None:
        raise RuntimeError("_run_window runs in a worker started with _start_worker as its initializer")
    store = _QueueStore(_queue)
    stopped, _ = run_window(store, run_id, cells, work, batch_hook, 0, len(cells), None, _stop.is_set, {})
    return stopped, store.results, os.getpid(), time.process_time()


@contextmanager
def launch_environment(env: dict[str, str]):
    """``env`` in this process while workers start, restored after: a spawned worker inherits the environment as it
    is when it starts and imports torch before its initializer runs, so the OMP and hub variables must be there then;
    a library user's process keeps its own environment."""
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_in_processes(store, run_id: str, pending: list, work, batch_hook, done: int, total: int, progress,
                     should_stop, errors: dict[str, str], workers: int | None, eta, run_window,
                     largest_window: int = 32) -> tuple[bool, int]:
    """Run ``pending`` cells in worker processes; returns (stopped, done) like the local executor. ``run_window``:
    the local executor's loop over one window (``jobs.run_window``), which each worker runs."""
    if not pending:
        return False, done
    if not workers and not settings.run_workers():  # on GPUs: one worker per GPU used (worker_devices.py)
        workers = worker_devices.gpu_workers() or None
    workers = max(1, min(workers or default_workers(), len(pending)))
    windows, start = [], 0
    for size in window_sizes(len(pending), workers, largest_window):
        windows.append(pending[start:start + size])
        start += size
    context = multiprocessing.get_context("spawn")
    channel, stop, placements = context.Queue(), context.Event(), context.Queue()
    for placement in worker_devices.plan(workers):
        placements.put(placement)
    reported: set[str] = set()
    worker_cpu: dict[int, float] = {}  # pid -> the process CPU seconds it last reported
    stopped = False

    def receive(timeout: float) -> bool:
        try:
            record(*channel.get(timeout=timeout))
        except queue_module.Empty:
            return False
        return True

    def record(key: str, result: dict, seconds: float) -> None:
        nonlocal done
        if key in reported:  # sent twice: through the queue and with its window's result
            return
        store.put_cell(run_id, key, result, seconds)
        reported.add(key)
        if "error" in result:
            errors[key] = result["error"]
        done += 1
        if progress is not None:
            progress(done, total, eta(store, run_id, total - done, parallel=workers))

    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_start_worker,
                             initargs=(worker_environment(workers), channel, stop, placements)) as pool:
        with launch_environment(settings.runtime_environment()):  # the workers start at the first submit
            futures = {pool.submit(_run_window, run_window, run_id, window, work, batch_hook): window
                       for window in windows}
        running = set(futures)
        while running:
            receive(0.25)  # sleeps until a cell arrives: the parent must not take the workers' cores
            while receive(0.0):
                pass
            finished = {future for future in running if future.done()}
            running -= finished
            if not stopped and should_stop is not None and should_stop():
                stopped = True
                stop.set()
                for future in running:
                    future.cancel()  # windows not started yet; running ones stop at their next check
            for future in finished:
                if future.cancelled():
                    continue
                window = futures[future]
                try:
                    window_stopped, results, pid, cpu = future.result()
                    charge_cpu(cpu - worker_cpu.get(pid, 0.0))  # what the worker used since its last window
                    worker_cpu[pid] = cpu
                except BrokenProcessPool as error:  # a worker died: every window not finished fails with it
                    failure = f"a worker process stopped ({error}); start the run again to compute this cell"
                    done = _fail_unreported(store, run_id, window, reported, errors, failure, done, total, progress)
                    continue
                except Exception as error:  # noqa: BLE001 (the window's hook failed: its cells are recorded as failed)
                    done = _fail_unreported(store, run_id, window, reported, errors,
                                            f"{type(error).__name__}: {error}", done, total, progress)
                    continue
                stopped = stopped or window_stopped
                for result in results:
                    record(*result)
        while receive(0.0):  # the last cells' copies sent through the queue
            pass
    return stopped, done


def _fail_unreported(store, run_id: str, window: list, reported: set[str], errors: dict[str, str], message: str,
                     done: int, total: int, progress) -> int:
    """The window's cells that never came back, stored as failed (a failed cell is computed again on resume)."""
    for cell in window:
        if cell.key not in reported:
            store.put_cell(run_id, cell.key, {"error": message}, 0.0)
            reported.add(cell.key)
            errors[cell.key] = message
            done += 1
            if progress is not None:
                progress(done, total, None)
    return done
