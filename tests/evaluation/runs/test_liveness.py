"""Truthful run status: "running" only while a process works on the run, "interrupted" once it is gone."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest

from evaluation.roar.study import KIND as ROAR_KIND
from evaluation.runs.jobs import Cell, run_cells
from evaluation.runs.liveness import this_process
from evaluation.runs.store import ResultStore

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

MARK_RUNNING = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from evaluation.runs.store import ResultStore
    store = ResultStore({path!r})
    run_id = store.create_run({kind!r}, {{"n": 1}}, total=3, title="killed study")
    store.set_status(run_id, "running")
    print(run_id, flush=True)
    time.sleep(600)
""")


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_a_run_whose_process_was_killed_reads_interrupted_in_the_store_and_the_cli_list(tmp_path):
    path = str(tmp_path / "results.sqlite")
    worker = subprocess.Popen([sys.executable, "-c", MARK_RUNNING.format(root=ROOT, path=path, kind=ROAR_KIND)],
                              stdout=subprocess.PIPE, text=True)
    try:
        run_id = worker.stdout.readline().strip()
        store = ResultStore(path)
        assert store.get_run(run_id)["status"] == "running"  # its process is alive: it is running
        assert store.get_run(run_id)["meta"]["process"]["pid"] == worker.pid
    finally:
        worker.kill()
        worker.wait()
    assert store.get_run(run_id)["status"] == "interrupted"
    assert [r["status"] for r in store.list_runs(ROAR_KIND)] == ["interrupted"]
    listing = subprocess.run([sys.executable, "cli.py", "roar", "--list"], cwd=ROOT, capture_output=True, text=True,
                             env={**os.environ, "EXWB_CACHE_DIR": str(tmp_path)}, timeout=300)
    assert listing.returncode == 0, listing.stderr
    line = next(line for line in listing.stdout.splitlines() if line.startswith(run_id))
    assert "interrupted" in line and "running" not in line


def test_a_reused_pid_is_not_taken_for_the_runs_process(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    run_id = store.create_run("evaluation", {"n": 2}, total=1)
    store.set_status(run_id, "running")
    assert store.get_run(run_id)["status"] == "running"  # this process, alive
    stale = {**store.get_run(run_id)["meta"], "process": {**this_process(), "started": this_process()["started"] - 1}}
    store.set_status(run_id, "failed", meta=stale)
    with store._connect() as db:  # as a process that died long ago with this pid would have left it
        db.execute("UPDATE runs SET status = 'running' WHERE id = ?", (run_id,))
    assert store.get_run(run_id)["status"] == "interrupted"


def test_running_while_the_cells_run_and_finished_after(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    run_id = store.create_run("evaluation", {"n": 3}, total=1)
    inside, release = threading.Event(), threading.Event()

    def work(spec):
        inside.set()
        release.wait(10)
        return {"value": 1}

    thread = threading.Thread(target=run_cells, args=(store, run_id, [Cell("a", {})], work))
    thread.start()
    assert inside.wait(10)
    assert store.get_run(run_id)["status"] == "running"
    release.set()
    thread.join(10)
    assert store.get_run(run_id)["status"] == "finished"
