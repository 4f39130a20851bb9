"""Saved slices: a named selection of a predictions table, with its metrics and (once explained) its word summary.

A slice is kept in the result store as a one-cell run of kind ``error-slice`` tied to the predictions run it was
cut from, so it survives restarts, reopens instantly and exports as JSON with the store's other runs.
"""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from evaluation.errors.filters import Filters
from evaluation.errors.slices import SliceSummary
from evaluation.runs.store import ResultStore
from models import UserFacingError

KIND = "error-slice"


def slice_metrics(rows: pd.DataFrame) -> dict:
    """Size, accuracy and error count over the labelled rows, and the mean confidence, of a slice."""
    labelled = rows[rows["correct"].notna()]
    correct = labelled["correct"].astype(bool)
    return {"examples": int(len(rows)), "labelled": int(len(labelled)),
            "errors": int((~correct).sum()),
            "accuracy": float(correct.mean()) if len(labelled) else None,
            "mean_confidence": float(rows["confidence"].mean()) if len(rows) else None}


def save_slice(store: ResultStore, name: str, predictions_run: str, filters: Filters, rows: pd.DataFrame,
               summary: SliceSummary | None = None) -> str:
    """Keep the slice (its example indices, filters and metrics; the summary when there is one); returns its run id.
    The same name on the same predictions replaces the earlier slice."""
    name = name.strip()
    if not name:
        raise UserFacingError("Give the slice a name to save it.")
    if rows.empty:
        raise UserFacingError("The slice is empty: nothing to save. Loosen the filters first.")
    config = {"name": name, "predictions_run": predictions_run}
    existing = [run for run in store.list_runs(KIND) if run["config"] == config]
    for run in existing:
        store.delete_run(run["id"])
    run_id = store.create_run(KIND, config, total=1, title=f"slice '{name}' ({len(rows)} examples)")
    store.put_cell(run_id, "slice", {"filters": asdict(filters), "indices": [int(i) for i in rows["index"]],
                                     "metrics": slice_metrics(rows),
                                     "summary": summary.to_dict() if summary is not None else None})
    store.set_status(run_id, "done")
    return run_id


def saved_slices(store: ResultStore, predictions_run: str) -> pd.DataFrame:
    """The slices saved from one predictions run: name, metrics, method, when; newest first."""
    rows = []
    for run in store.list_runs(KIND):
        if run["config"].get("predictions_run") != predictions_run:
            continue
        cell = store.cells(run["id"]).get("slice", {})
        summary = cell.get("summary") or {}
        rows.append({"name": run["config"]["name"], **cell.get("metrics", {}),
                     "method": summary.get("method"), "saved": run["updated"], "run": run["id"]})
    columns = ["name", "examples", "labelled", "errors", "accuracy", "mean_confidence", "method", "saved", "run"]
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values("saved", ascending=False, kind="stable").reset_index(drop=True)


def load_slice(store: ResultStore, run_id: str) -> dict:
    """The stored slice (filters, indices, metrics, summary)."""
    run = store.get_run(run_id)
    if run is None or run["kind"] != KIND:
        raise UserFacingError(f"No saved slice {run_id} in the result store.")
    return {"name": run["config"]["name"], **store.cells(run_id)["slice"]}


def export_slices(store: ResultStore, predictions_run: str) -> list[dict]:
    """Every slice of one predictions run, whole, for a JSON download."""
    return [load_slice(store, run_id) for run_id in saved_slices(store, predictions_run)["run"]]

