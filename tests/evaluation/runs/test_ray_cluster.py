"""Ray beyond one process: a two-node cluster started on this machine the way a real one is started
(`ray start --head`, then `ray start --address=...` for a second node) runs a ROAR study and a dataset
evaluation; a worker killed in the middle of the study loses no cell. The recipe is in docs/roar.md.

The cluster's processes are stopped at the end, pass or fail. Only this cluster's: `ray stop` would stop every
Ray process of the user on the machine (another test run's cluster too), so the test kills the processes that
carry its marker in their environment, which every process of this cluster inherits. The test cluster lives for
a minute on this machine and runs without Ray's token authentication; a real cluster keeps it (docs/roar.md).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from roar_fixtures import save_keyword_model, tiny_study_kwargs, write_keyword_csv
from tolerances import float32_tolerance

from evaluation.roar.study import build_config, prepare_study, roar_cell
from evaluation.roar.training import Variant
from evaluation.runs import ray_executor
from evaluation.runs.jobs import run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite.runner import evaluate_example, run_evaluation, start_evaluation
from evaluation.summary import results_frame

pytestmark = [pytest.mark.slow, pytest.mark.ray]
ray = pytest.importorskip("ray")

RAY_CLI = Path(sys.executable).parent / "ray"
TASK_TITLE = b"ray::_safe"  # the process title of a Ray worker while it runs a cell (jobs._safe)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cluster_processes(marker: str) -> list[int]:
    """Processes of this cluster: every one inherited the environment variable ``marker``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if marker.encode() in (entry / "environ").read_bytes():
                    pids.append(int(entry.name))
            except OSError:  # gone, or not ours to read
                continue
    return pids


def _running_cell_workers(marker: str) -> list[int]:
    workers = []
    for pid in _cluster_processes(marker):
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().startswith(TASK_TITLE):
                workers.append(pid)
        except OSError:
            continue
    return workers


def _stop(marker: str) -> None:
    for _ in range(3):  # raylets restart nothing once the GCS is gone; a second pass catches late children
        pids = _cluster_processes(marker)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.5)


@pytest.fixture(scope="module")
def cluster():
    if shutil.which(str(RAY_CLI)) is None:
        pytest.skip("the `ray` command is not installed")
    temp = Path(tempfile.mkdtemp(prefix="/tmp/exwb-ray-"))  # short: Ray's socket paths must fit in 107 bytes
    marker = f"EXWB_TEST_RAY_CLUSTER={temp}"
    env = {**os.environ, "EXWB_TEST_RAY_CLUSTER": str(temp), "RAY_AUTH_MODE": "disabled",
           "RAY_USAGE_STATS_ENABLED": "0"}
    port = _free_port()
    address = f"127.0.0.1:{port}"
    try:
        ray_executor.shutdown()  # this process joins the cluster, not a Ray instance of an earlier test
        for command in ([str(RAY_CLI), "start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
                         f"--temp-dir={temp}", "--disable-usage-stats"],
                        [str(RAY_CLI), "start", f"--address={address}", "--num-cpus=1"]):
            started = subprocess.run(command, env=env, capture_output=True, text=True, timeout=180)
            assert started.returncode == 0, started.stdout[-2000:] + started.stderr[-2000:]
        yield SimpleNamespace(address=address, marker=marker)
    finally:
        ray_executor.shutdown()
        _stop(marker)
        shutil.rmtree(temp, ignore_errors=True)
    assert not _cluster_processes(marker), "the test cluster's processes are still running"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("ray-cluster")
    folder = save_keyword_model(keyword_classifier, root / "model")
    data = root / "data"
    data.mkdir()
    write_keyword_csv(data / "train.csv", 60, seed=1)
    write_keyword_csv(data / "test.csv", 30, seed=2)
    return SimpleNamespace(root=root, folder=folder, data=data)


def test_a_two_node_cluster_runs_a_study_and_a_killed_worker_loses_no_cell(cluster, tiny, monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tiny.root / "cache"))  # travels to the workers (EXWB_*)

    config = build_config(**tiny_study_kwargs(tiny.folder, tiny.data, measures=["loo"], ratios=[20, 50], seeds=[0],
                                              mode="both", variant=Variant(trainable="head", train_size=60,
                                                                           test_size=30, epochs=1)))
    store, run_id, cells = prepare_study(config, ResultStore(tiny.root / "study.sqlite"))
    killed: list[int] = []

    def kill_one_worker_mid_study():
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not killed:
            workers = _running_cell_workers(cluster.marker)
            if store.cells(run_id) and workers:  # some cells stored, one running: kill it
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one_worker_mid_study, daemon=True)
    killer.start()
    summary = run_cells(store, run_id, cells, roar_cell, executor="ray", ray_address=cluster.address)
    killer.join(timeout=5)
    assert killed, "no cell was running while the study ran: nothing was killed"
    if summary.errors:  # Ray retries a task whose worker died; where it gave up, a rerun resumes the failed cells
        assert all("Ray worker" in e for e in summary.errors.values()), summary.errors
        summary = run_cells(store, run_id, cells, roar_cell, executor="ray", ray_address=cluster.address)
    alive = [node for node in ray.nodes() if node["Alive"]]  # the runner joined the cluster, uploading the project
    assert len(alive) == 2 and ray.cluster_resources()["CPU"] == 2
    assert ray.get_runtime_context().runtime_env.get("working_dir", "").startswith("gcs://")
    stored = store.cells(run_id)
    assert summary.status == "finished" and not summary.errors
    assert set(stored) == {cell.key for cell in cells} and not any("error" in c for c in stored.values())
    workers = {c["worker"]["pid"] for c in stored.values()}
    # two worker processes ran cells, never the driver: the killed one was running a cell, and on a fast CPU the
    # other node can finish every remaining cell while Ray restarts the killed one's worker
    assert os.getpid() not in workers and len(workers | set(killed)) >= 2
    # the killed worker is gone (it may have stored cells before it died): every cell finished all the same
    with pytest.raises(ProcessLookupError):
        os.kill(killed[0], 0)


def test_the_cluster_runs_a_dataset_evaluation_with_the_local_numbers(cluster, tiny, monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tiny.root / "cache"))
    monkeypatch.setenv("EXWB_RAY_ADDRESS", cluster.address)  # what `--executor ray` reads without an address
    dataset = f"file:{tiny.data / 'test.csv'}"
    store, summary = run_evaluation(str(tiny.folder), dataset, ["leave_one_out", "attention"], ["eraser"], limit=4,
                                    options={"random_orderings": 0}, store=ResultStore(tiny.root / "eval.sqlite"),
                                    executor="ray")
    assert summary.status == "finished" and summary.done == 4 and not summary.errors
    frame = results_frame(store, summary.run_id)
    _store, _run_id, cells = start_evaluation(str(tiny.folder), dataset, ["leave_one_out", "attention"], ["eraser"],
                                              4, {"random_orderings": 0}, ResultStore(tiny.root / "local.sqlite"))
    for cell in cells:  # each example again in this process: the same values (float32, another process)
        local = evaluate_example(cell.spec)
        remote = frame[frame["example_id"] == cell.key].set_index(["method", "metric"])["value"]
        for row in local["rows"]:
            assert remote[(row["method"], row["metric"])] == pytest.approx(row["value"], abs=float32_tolerance(1.0))
