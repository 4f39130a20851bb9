"""every statistic of a run is a function of the SET of its cells, not of the order they finished in.

The same study run locally and on Ray gave equal means and different 95 % bounds: the store returned cells in the
order they finished and the seeded bootstrap indexes that order. Here the same cells are written in shuffled orders
(what different executors do) and the run's table must come out identical.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.metric import RANDOM_METHOD
from evaluation.runs.store import ResultStore
from evaluation.statistics import bootstrap_ci
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import KIND

N_EXAMPLES = 40


def cells() -> dict[str, dict]:
    """Cells as a faithfulness run stores them: per example a method's value and the random baseline's."""
    rng = np.random.default_rng(7)
    out = {}
    for index in range(N_EXAMPLES):
        method, random = rng.gamma(2.0, 0.05), rng.gamma(2.0, 0.04)
        out[f"sst2:dev:{index}"] = {"rows": [
            {"method": "saliency", "metric": "comprehensiveness", "value": float(method)},
            {"method": RANDOM_METHOD, "metric": "comprehensiveness", "value": float(random),
             "orderings": [float(random + d) for d in rng.normal(0, 0.01, 4)]}]}
    return out


def store_in_order(tmp_path, order: list[str], name: str) -> tuple[ResultStore, str]:
    store = ResultStore(tmp_path / f"{name}.sqlite")
    run_id = store.create_run(KIND, {"model": "m", "dataset": "sst2:dev", "options": {}}, total=N_EXAMPLES)
    everything = cells()
    for key in order:  # one cell at a time, as an executor finishes them
        store.put_cell(run_id, key, everything[key], seconds=0.1)
    return store, run_id


def test_the_run_table_is_the_same_whatever_order_the_cells_finished(tmp_path):
    keys = list(cells())
    tables = []
    for attempt in range(3):
        order = list(np.random.default_rng(attempt).permutation(keys)) if attempt else keys
        store, run_id = store_in_order(tmp_path, order, f"order-{attempt}")
        assert list(store.cells(run_id)) == sorted(keys)  # by key, not by finish time
        tables.append(run_table(store, run_id).drop(columns=["run_id"]))
    for table in tables[1:]:
        pd.testing.assert_frame_equal(table, tables[0])
    row = tables[0][tables[0]["method"] == "saliency"].iloc[0]
    assert row["low"] < row["mean"] < row["high"] and row["diff_low"] < row["diff_high"]


@pytest.mark.parametrize("seed", [0, 3])
def test_the_bootstrap_interval_is_a_function_of_the_values_not_their_order(seed):
    values = np.random.default_rng(seed).gamma(2.0, 0.05, 50)
    shuffled = np.random.default_rng(seed + 1).permutation(values)
    a, b = bootstrap_ci(values, seed=0), bootstrap_ci(shuffled, seed=0)
    assert (a.low, a.high) == (b.low, b.high) and a.mean == pytest.approx(b.mean, abs=1e-15)
