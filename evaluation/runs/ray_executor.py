"""The Ray executor of the job runner: cells as Ray tasks on a cluster or on a local Ray instance.

- Address: the ``ray_address`` argument, else ``EXWB_RAY_ADDRESS``; empty or ``local`` starts (or reuses) a
  Ray instance on this machine; ``auto``, ``host:port`` or ``ray://host:port`` joins an existing cluster.
  A Ray instance already running in this process (``ray.init(...)`` by the caller) is used as it is.
- Workers import the project: on this machine through ``PYTHONPATH`` (the project folder), on a remote
  cluster through ``runtime_env.working_dir`` (the project folder is uploaded; data and caches are not).
  Ray uploads a folder only for a whole job, so the runner joins a cluster with that runtime environment
  (``ray.init(address, runtime_env=...)``); each task carries the environment variables only.
  The ``EXWB_*`` settings, the offline-hub and thread settings travel in ``runtime_env.env_vars``; workers
  never import Streamlit. The data folder is resolved on the driver and travels as an absolute
  ``EXWB_DATA_DIR``: the default (``shared/data`` beside the project) would otherwise resolve beside the
  workers' uploaded copy, where there is none. A cluster whose nodes do not share this path needs the data at
  the same path on each node, or an ``EXWB_DATA_DIR`` that names the nodes' folder (passed as written when no
  such folder exists on the driver).
- Devices: each task asks for ``resources`` (``num_cpus``, ``num_gpus``; the command line's
  ``--ray-cpus`` / ``--ray-gpus`` set the process's default, ``use_resources``). A task with GPUs sees only its
  own (Ray sets CUDA_VISIBLE_DEVICES), runs with EXWB_DEVICE=cuda and EXWB_DEVICE_SHARE = its share of one GPU
  (the memory budget's share, models/memory.py), and loads its own model copy; a task without GPUs runs on the
  CPU (EXWB_DEVICE=cpu), so no CPU task lands on a GPU that GPU tasks were given. An EXWB_DEVICE other than
  ``auto`` is kept as written.
- Cells are submitted in order, a few per free worker at a time, so stopping is quick and earlier cells
  (e.g. Recursive ROAR's earlier steps) start first. A cell that fails, or a worker that dies, is recorded
  as that cell's error; the other cells go on. Stopping cancels the running tasks (``ray.cancel(force=True)``).
"""
from __future__ import annotations

import os
import time
import traceback
from typing import Any

import settings
from models.errors import UserFacingError

PASSED_PREFIXES = ("EXWB_",)
PASSED_NAMES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "OMP_WAIT_POLICY", "TOKENIZERS_PARALLELISM",
                "TRANSFORMERS_NO_ADVISORY_WARNINGS", "XDG_CACHE_HOME")
EXCLUDES = [".git", "**/__pycache__", ".pytest_cache", "*.sqlite", "*.sqlite-*", "*.pt", "*.safetensors", "*.bin",
            "node_modules", ".venv", "venv"]


_default_resources: dict | None = None


def use_resources(resources: dict | None) -> None:
    """The per-task resources of this process's Ray runs that name none (a command's --ray-cpus / --ray-gpus)."""
    global _default_resources
    _default_resources = dict(resources) if resources else None


def default_resources() -> dict:
    return dict(_default_resources or {"num_cpus": 1})


def device_env_vars(resources: dict) -> dict[str, str]:
    """Where a task with these resources places its model: its GPU (and its share of it) or the CPU."""
    gpus = float(resources.get("num_gpus", 0) or 0)
    env = {"EXWB_DEVICE_SHARE": f"{min(gpus, 1.0):g}"} if gpus > 0 else {}
    if settings.device_setting() == "auto":
        env["EXWB_DEVICE"] = "cuda" if gpus > 0 else "cpu"
    return env


def resolve_address(address: str | None) -> str | None:
    """None for a local instance, else the cluster address."""
    address = (address if address is not None else settings.ray_address()).strip()
    return None if address in ("", "local") else address


def worker_env_vars(cpus_per_task: float = 1.0, remote: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(PASSED_PREFIXES) or k in PASSED_NAMES}
    if remote:  # paths of this machine mean nothing on the cluster's nodes
        env.pop("XDG_CACHE_HOME", None)
    data = settings.data_dir()
    setting = settings.data_dir_setting()
    if data is not None and (setting is None or setting.is_dir()):
        # resolved here: beside the workers' uploaded copy of the project there is no shared/data (an EXWB_DATA_DIR
        # that names no folder on this machine may be the nodes' own and travels as written)
        env["EXWB_DATA_DIR"] = str(data)
    env.setdefault("EXWB_THREADS", str(max(1, int(cpus_per_task))))  # no oversubscription of the node's cores
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    if not remote:
        paths = [str(settings.ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return env


def runtime_env(address: str | None, cpus_per_task: float = 1.0, extra: dict | None = None) -> dict:
    remote = address is not None
    env: dict[str, Any] = {"env_vars": worker_env_vars(cpus_per_task, remote)}
    if remote:
        env["working_dir"] = str(settings.ROOT)
        env["excludes"] = list(EXCLUDES)
    for key, value in (extra or {}).items():
        if key == "env_vars":
            env["env_vars"] = {**env["env_vars"], **value}
        else:
            env[key] = value
    return env


def connect(address: str | None, job_env: dict | None = None):
    """Import Ray and connect (or reuse the connection); a clear message instead of a traceback.
    ``job_env``: the runtime environment of the whole job when joining a cluster (the uploaded project)."""
    try:
        import ray
    except ImportError as error:
        raise UserFacingError("The Ray executor needs the 'ray' package: pip install 'ray[default]' (or use the "
                              "local executor).") from error
    if ray.is_initialized():
        return ray
    try:
        if address is None:
            ray.init(ignore_reinit_error=True, log_to_driver=False, include_dashboard=False)
        else:
            ray.init(address=address, ignore_reinit_error=True, log_to_driver=False, runtime_env=job_env)
    except Exception as error:  # noqa: BLE001  (ConnectionError, RuntimeError, ValueError by address kind)
        where = "a local Ray instance" if address is None else f"the Ray cluster at '{address}'"
        raise UserFacingError(f"Cannot start or reach {where}: {str(error).splitlines()[0] if str(error) else error}. "
                              f"Start one with `ray start --head`, check the address, or use the local "
                              f"executor.") from error
    return ray


def parallelism(ray, resources: dict) -> int:
    """How many cells the cluster can run at once with these per-task resources."""
    total = ray.cluster_resources()
    counts = []
    for name, key in (("num_cpus", "CPU"), ("num_gpus", "GPU")):
        need = float(resources.get(name, 0) or 0)
        if need > 0:
            counts.append(int(total.get(key, 0) // need))
    return max(1, min(counts) if counts else int(total.get("CPU", 1)))


def _failure(error: Exception) -> dict:
    message = f"{type(error).__name__}: {str(error).strip().splitlines()[-1] if str(error).strip() else ''}"
    if "ModuleNotFoundError" in str(error) or "No module named" in str(error):
        message += (" (the Ray workers cannot import the project: start the cluster from the project folder, "
                    "or let the runner upload it with a cluster address)")
    return {"error": f"Ray worker: {message}", "traceback": traceback.format_exc(limit=3)}


def run_on_ray(store, run_id, pending, work, done, total, progress, should_stop, errors, address, resources,
               extra_runtime_env=None, safe=None, eta=None) -> tuple[bool, int]:
    """Run ``pending`` cells as Ray tasks; returns (stopped, done)."""
    address = resolve_address(address)
    resources = dict(resources or default_resources())
    env = runtime_env(address, float(resources.get("num_cpus", 1) or 1), extra_runtime_env)
    env["env_vars"] = {**env["env_vars"], **device_env_vars(resources)}
    try:
        ray = connect(address, env if address is not None else None)
    except UserFacingError as error:
        run = store.get_run(run_id) or {"meta": {}}
        store.set_status(run_id, "failed", meta={**run.get("meta", {}), "error": str(error)})
        raise
    # a folder is uploaded once per job (at ray.init above), never per task: Ray refuses a local path there
    task_env = {key: value for key, value in env.items() if key not in ("working_dir", "excludes")}
    remote = ray.remote(**resources)(safe).options(runtime_env=task_env)
    parallel = parallelism(ray, resources)
    window = 2 * parallel
    queue = list(pending)
    futures: dict = {}
    stopped = False
    while queue or futures:
        while queue and len(futures) < window:
            cell = queue.pop(0)
            futures[remote.remote(work, cell.spec)] = cell
        if should_stop is not None and should_stop():
            for future in futures:
                ray.cancel(future, force=True)
            stopped = True
            break
        ready, _ = ray.wait(list(futures), num_returns=1, timeout=1.0)
        for future in ready:
            cell = futures.pop(future)
            started = time.perf_counter()
            try:
                result, seconds = ray.get(future)
            except Exception as error:  # noqa: BLE001  (a dead worker, an unpicklable result, ...)
                result, seconds = _failure(error), time.perf_counter() - started
            store.put_cell(run_id, cell.key, result, seconds)
            if "error" in result:
                errors[cell.key] = result["error"]
            done += 1
            if progress is not None:
                progress(done, total, eta(store, run_id, total - done, parallel) if eta else None)
    return stopped, done


def shutdown() -> None:
    """Stop the Ray instance this process started or joined (tests, the end of a command)."""
    try:
        import ray
    except ImportError:
        return
    if ray.is_initialized():
        ray.shutdown()
