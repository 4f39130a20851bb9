"""The time left of a stored run counts the running cell's elapsed time (models/metering.py), with injected times."""
from __future__ import annotations

from evaluation.runs.store import ResultStore
from ui.widgets.run_progress import time_left


def test_time_left_moves_while_a_cell_runs(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    run_id = store.create_run("test", {"n": 3}, total=3)
    store.put_cell(run_id, "a", {"value": 1}, seconds=60.0)
    run = store.get_run(run_id)
    start = run["updated"]  # the second cell started when the first one was stored
    assert time_left(store, run, now=start, running=False) == "about 2.0 min left"  # 2 cells x 60 s
    assert time_left(store, run, now=start + 30, running=True) == "about 1.5 min left"  # 30 s + 60 s
    assert time_left(store, run, now=start + 60, running=True) == "about 1.0 min left"
    # overdue (90 s > the 60 s mean): the cell after it now looks (60 + 90) / 2 = 75 s long
    assert time_left(store, run, now=start + 90, running=True) == "about 1.2 min left"
    assert time_left(store, run, now=start + 150, running=True) == "about 1.8 min left"  # (60 + 150) / 2


def test_time_left_before_the_first_cell_and_for_the_last_one(tmp_path):
    store = ResultStore(tmp_path / "results.sqlite")
    run_id = store.create_run("test", {"n": 2}, total=2, meta={"estimated_cell_seconds": 30.0})
    run = store.get_run(run_id)
    assert time_left(store, run, now=run["updated"] + 12, running=True) == "about 0.8 min left"  # 18 s + 30 s
    bare = store.get_run(store.create_run("test", {"n": 1}, total=1))
    assert time_left(store, bare, now=bare["updated"] + 7, running=True) == "first cell running for 7 s"
    assert time_left(store, bare, running=False) == ""
    store.put_cell(run_id, "a", {"value": 1}, seconds=30.0)
    run = store.get_run(run_id)
    assert time_left(store, run, now=run["updated"] + 90, running=True) == \
        "last cell running for 1.5 min, longer than the others"
