"""Result tables of a stored dataset run, whatever wrote it (the registry-driven runner, the families' own
runs): a cell's rows as one frame, the random orderings' values, and ``summarize``: method x metric means with
bootstrap 95 % confidence intervals and the comparison with the random baseline."""
from __future__ import annotations

from dataclasses import asdict
from typing import Protocol

import numpy as np
import pandas as pd

from evaluation.baselines import band, compare_with_random
from evaluation.metric import METRICS, RANDOM_METHOD
from evaluation.statistics import bootstrap_ci


class StoredCells(Protocol):
    """What these tables read of a result store (``runs/store.py``'s ``ResultStore``; the core imports no run)."""

    def cells(self, run_id: str) -> dict: ...


def cell_rows_frame(store: StoredCells, run_id: str, columns: list[str]) -> pd.DataFrame:
    """The ``rows`` of every stored cell as one table (a column ``example_id`` names the cell); failed cells
    (no rows) are left out."""
    records = [{"example_id": key, **row} for key, cell in store.cells(run_id).items() for row in cell.get("rows", [])]
    return pd.DataFrame.from_records(records, columns=["example_id", *columns])


def results_frame(store: StoredCells, run_id: str) -> pd.DataFrame:
    """One row per (example, method, metric) with the value and whether it is ill-conditioned (kept, left out of
    the means: ``summarize``)."""
    frame = cell_rows_frame(store, run_id, ["method", "metric", "value", "ill_conditioned"])
    frame["ill_conditioned"] = frame["ill_conditioned"].eq(True)
    return frame


def random_orderings_frame(store: StoredCells, run_id: str) -> pd.DataFrame:
    """The random baseline's value per (example, metric, ordering)."""
    records = []
    for key, cell in store.cells(run_id).items():
        for row in cell.get("rows", []):
            for ordering, value in enumerate(row.get("orderings") or []):
                records.append({"example_id": key, "metric": row["metric"], "ordering": ordering, "value": value})
    return pd.DataFrame.from_records(records, columns=["example_id", "metric", "ordering", "value"])


def summarize(frame: pd.DataFrame, orderings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Method x metric: mean, 95 % bootstrap CI and n, with the metric's direction.

    When the frame holds the random baseline (method ``RANDOM_METHOD``), every other row also gets the random
    mean and band, the paired bootstrap CI of (method - random) and ``vs_random`` ("better than random",
    "worse than random" or "not distinguishable from random"). ``orderings`` (``random_orderings_frame``)
    makes the band the spread of the per-ordering dataset means.
    """
    rows = []
    # ill-conditioned values (e.g. a soft metric's tiny all-masked denominator) are kept in the frame and left out
    # of every mean here, counted (``excluded``) and averaged on their own (``excluded_mean``)
    flagged = frame["ill_conditioned"].eq(True) if "ill_conditioned" in frame else pd.Series(False, index=frame.index)
    excluded_part, frame = frame[flagged], frame[~flagged]
    if orderings is not None and len(orderings) and len(excluded_part):
        dropped = set(zip(excluded_part["example_id"], excluded_part["metric"]))
        orderings = orderings[[pair not in dropped for pair in zip(orderings["example_id"], orderings["metric"])]]
    random_part = frame[frame["method"] == RANDOM_METHOD] if len(frame) else frame
    groups = dict(list(frame.groupby(["method", "metric"], sort=False)))
    for key, group in excluded_part.groupby(["method", "metric"], sort=False):
        groups.setdefault(key, group.iloc[:0])  # every value excluded: a row with n = 0 and the count
    for (method, metric), group in groups.items():
        estimate = bootstrap_ci(group["value"].to_numpy())
        info = METRICS.get(metric)
        left_out = excluded_part[(excluded_part["method"] == method) & (excluded_part["metric"] == metric)]["value"]
        row = {"method": method, "metric": metric, **asdict(estimate),
               "higher_is_better": None if info is None else info.higher_is_better,
               "excluded": int(len(left_out)),
               "excluded_mean": float(np.nanmean(left_out)) if left_out.notna().any() else float("nan")}
        reference = random_part[random_part["metric"] == metric]
        if method != RANDOM_METHOD and len(reference):
            paired = group.merge(reference[["example_id", "value"]], on="example_id", suffixes=("", "_random"))
            matrix = _orderings_matrix(orderings, metric, paired["example_id"])
            comparison = compare_with_random(paired["value"].to_numpy(), paired["value_random"].to_numpy(), matrix,
                                             higher_is_better=True if info is None else info.higher_is_better)
            row.update({"random_mean": comparison.random.mean, "random_low": comparison.band[0],
                        "random_high": comparison.band[1], "diff_mean": comparison.difference.mean,
                        "diff_low": comparison.difference.low, "diff_high": comparison.difference.high,
                        "vs_random": comparison.verdict})
        elif method == RANDOM_METHOD and orderings is not None and len(orderings):
            # the band the method rows get from compare_with_random, computed the same way (pandas'
            # compensated groupby mean put it a few ulps away from theirs)
            matrix = _orderings_matrix(orderings, metric, group["example_id"])
            assert matrix is not None  # orderings were given
            low, high = band(np.nanmean(matrix[np.isfinite(group["value"].to_numpy(dtype=np.float64))], axis=0))
            row.update({"random_mean": estimate.mean, "random_low": low, "random_high": high})
        rows.append(row)
    return pd.DataFrame(rows)


def _orderings_matrix(orderings: pd.DataFrame | None, metric: str, example_ids) -> np.ndarray | None:
    """The random orderings' values of ``metric`` as (examples, orderings), rows in the order of ``example_ids``."""
    if orderings is None or not len(orderings):
        return None
    wide = orderings[orderings["metric"] == metric].pivot_table(index="example_id", columns="ordering", values="value")
    return wide.reindex(example_ids).to_numpy()
