"""Dataset-level faithfulness reports from the result store: the method x metric table with bootstrap CIs,
the random baseline and the "not distinguishable from random" verdict, provenance columns, and the curves
with confidence bands. Used by ``cli.py evaluate`` and the Faithfulness page (which only draws them).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from evaluation.faithfulness.curves import RemovalOptions
from evaluation.faithfulness.presets import BY_ID
from evaluation.faithfulness.selection_bias import with_selection_columns
from evaluation.metric import METRICS, RANDOM_METHOD, RunOptions
from evaluation.plausibility.dataset import binarized_frames
from evaluation.plausibility.metrics import config_from_options
from evaluation.runs.store import ResultStore
from evaluation.statistics import bootstrap_ci
from evaluation.summary import summarize
from explainers.params import options_from
from models import OPERATORS, Operator

CURVE_GRID = 11


def metric_provenance(metric_id: str, options: dict | None) -> dict:
    """Preset, operator (after the run's override), target, special tokens and seed behind a metric's numbers."""
    options = options or {}
    removal = options_from(RemovalOptions, options)
    info = METRICS.get(metric_id)
    operator = info.operator if info is not None else None
    removal_metric = BY_ID.get(metric_id)
    sweep = "[" in metric_id  # the operator sweep keeps each metric's own operator
    if removal_metric is not None and removal.operator and not sweep:
        operator = removal.operator
    return {"preset": info.preset if info is not None else None,
            "operator": None if operator is None else OPERATORS[Operator(operator)].label,
            "target": removal.target, "contrast": removal.contrast, "special_tokens": "excluded" if removal.exclude_special else "counted",
            "seed": removal.seed, "random_orderings": int(options.get("random_orderings", 0) or 0)}


def run_table(store: ResultStore, run_id: str) -> pd.DataFrame:
    """Method x metric summary of a run with labels, direction arrows, random comparison and provenance."""
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"No run '{run_id}'.")
    options = run["config"].get("options", {})
    # the run's plausibility binarization, as the Plausibility page applies it (paper 002's top-p in place of top-k)
    frame, orderings = binarized_frames(store, run_id, config_from_options(options)[0],
                                        options_from(RunOptions, options))
    if frame.empty:
        return pd.DataFrame()
    table = summarize(frame, orderings)
    labels, arrows, provenance = [], [], []
    for metric_id in table["metric"]:
        info = METRICS.get(metric_id)
        labels.append(info.label if info is not None else metric_id)
        arrows.append("" if info is None else info.arrow)
        provenance.append(metric_provenance(metric_id, options))
    table.insert(2, "label", labels)
    table.insert(3, "direction", arrows)
    table = pd.concat([table, pd.DataFrame(provenance, index=table.index)], axis=1)
    table["model"] = run["config"].get("model")
    table["dataset"] = run["config"].get("dataset")
    table["run_id"] = run_id
    return with_selection_columns(table)  # AML's "tuned for" badge and warning travel with every exported row


def wide_table(table: pd.DataFrame, decimals: int = 3) -> pd.DataFrame:
    """method x metric cells "mean [low, high]" (the random baseline as its own row, its band in brackets),
    with a trailing "≈ random" on cells not distinguishable from random and the number of ill-conditioned inputs
    left out of the mean (with their own mean) where there are any."""
    if table.empty:
        return table
    cells: dict[str, dict[str, str]] = {}
    for _, row in table.iterrows():
        text = f"{row['mean']:.{decimals}f} [{row['low']:.{decimals}f}, {row['high']:.{decimals}f}]"
        if row["method"] == RANDOM_METHOD and pd.notna(row.get("random_low", np.nan)):
            low, high = f"{row['random_low']:.{decimals}f}", f"{row['random_high']:.{decimals}f}"
            text = f"{row['mean']:.{decimals}f} (band [{low}, {high}])"
        if row.get("vs_random") == "not distinguishable from random":
            text += " ≈ random"
        if row.get("excluded", 0) > 0:  # ill-conditioned inputs left out of the mean (soft metrics: soft.py)
            text += f" ({int(row['excluded'])} ill-conditioned excluded: mean {row['excluded_mean']:.{decimals}f})"
        cells.setdefault(row["method"], {})[f"{row['label']} {row['direction']}"] = text
    out = pd.DataFrame.from_dict(cells, orient="index")
    order = [m for m in out.index if m != RANDOM_METHOD] + ([RANDOM_METHOD] if RANDOM_METHOD in out.index else [])
    return out.loc[order]


def curve_metrics(store: ResultStore, run_id: str) -> list[str]:
    """Metric ids that have curves stored in the run."""
    found: list[str] = []
    for cell in store.cells(run_id).values():
        for per_method in cell.get("curves", {}).values():
            found += [m for m in per_method if m not in found]
    return found


def _on_grid(x: np.ndarray, y: np.ndarray, grid: np.ndarray | None) -> np.ndarray:
    return y if grid is None else np.interp(grid, x, y)


def dataset_curves(store: ResultStore, run_id: str, metric_id: str, value: str = "score",
                   grid_points: int = CURVE_GRID) -> dict:
    """Per method: x, mean and bootstrap 95 % CI of the curve over the examples; for the random baseline the
    mean and the 2.5-97.5 % band of the per-ordering mean curves.

    ``value``: "score" (the target's probability / log-probability after removal) or "change" (start - score).
    Step curves (deletion, insertion, decision flip) have one point per word, so each is put on a common grid
    of the fraction of its steps (``grid_points`` points) before averaging.
    """
    metric = BY_ID.get(metric_id.split("[")[0])
    steps = metric is not None and metric.schedule == "steps"
    grid = np.linspace(0.0, 1.0, grid_points) if steps else None
    per_method: dict[str, list[np.ndarray]] = {}
    random_rows: list[np.ndarray] = []
    x_axis = None
    for cell in store.cells(run_id).values():
        for method, curves in cell.get("curves", {}).items():
            curve = curves.get(metric_id)
            if not curve or not curve.get("x"):
                continue
            x = np.asarray(curve["x"], dtype=np.float64)
            if steps:
                x = x / x[-1] if x[-1] > 0 else x
            start = float(curve["start"])
            if method == RANDOM_METHOD:
                orderings = np.asarray(curve["orderings"], dtype=np.float64)
                ys = start - orderings if value == "change" else orderings
                random_rows.append(np.stack([_on_grid(x, y, grid) for y in ys]))
            else:
                y = np.asarray(curve["scores"], dtype=np.float64)
                y = start - y if value == "change" else y
                per_method.setdefault(method, []).append(_on_grid(x, y, grid))
            if x_axis is None:
                x_axis = grid if steps else x
    out: dict[str, Any] = {"metric": metric_id, "x": None if x_axis is None else x_axis.tolist(), "steps": steps,
                           "value": value, "methods": {}, "random": None}
    for method, rows in per_method.items():
        stacked = _stack(rows)
        estimates = [bootstrap_ci(stacked[:, j], resamples=500) for j in range(stacked.shape[1])]
        out["methods"][method] = {"mean": [e.mean for e in estimates], "low": [e.low for e in estimates],
                                  "high": [e.high for e in estimates], "n": len(rows)}
    if random_rows:
        width = min(r.shape[1] for r in random_rows)
        count = min(r.shape[0] for r in random_rows)
        cube = np.stack([r[:count, :width] for r in random_rows])  # examples x orderings x points
        per_ordering = np.nanmean(cube, axis=0)
        out["random"] = {"mean": per_ordering.mean(axis=0).tolist(),
                         "low": np.quantile(per_ordering, 0.025, axis=0).tolist(),
                         "high": np.quantile(per_ordering, 0.975, axis=0).tolist(), "orderings": int(count),
                         "n": len(random_rows)}
    return out


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    width = min(len(r) for r in rows)
    return np.stack([r[:width] for r in rows])
