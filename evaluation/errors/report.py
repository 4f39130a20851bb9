"""The error report of a dataset (``cli.py errors``): the predictions table, each explained error's top words, the
slice summary (the errors against as many correctly classified examples) and the shortcut words."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from corpora import Example
from evaluation.errors.filters import Filters, apply_filters, confident_errors_first, correct_rows
from evaluation.errors.predictions import PredictionTable, predict_dataset
from evaluation.errors.slices import MIN_COUNT, TOP_K, SliceSummary, shortcut_words, summarize_slice
from evaluation.runs.store import ResultStore
from models import TextClassifier

MAX_EXPLAINED = 100  # errors explained (the most confident first), and as many correct examples
TABLE_COLUMNS = ["index", "id", "text", "pair", "gold_label", "predicted_label", "confidence", "correct", "length",
                 "top_words"]

Progress = Callable[[int, int], None]


@dataclass
class ErrorReport:
    table: PredictionTable
    rows: pd.DataFrame  # TABLE_COLUMNS, confident errors first
    summary: SliceSummary | None  # None without labels or errors
    shortcuts: pd.DataFrame | None  # None without labels
    config: dict

    def to_dict(self) -> dict:
        return {"config": self.config, "accuracy": self.table.accuracy,
                "examples": len(self.rows), "errors": int(self.rows["correct"].eq(False).sum()),
                "table": self.rows.astype(object).where(self.rows.notna(), None).to_dict(orient="records"),
                "slice": self.summary.to_dict() if self.summary is not None else None,
                "shortcut_words": None if self.shortcuts is None else self.shortcuts.to_dict(orient="records")}


def error_report(classifier: TextClassifier, examples: list[Example], dataset: str, method: str, model: str,
                 store: ResultStore | None = None, max_explained: int = MAX_EXPLAINED, k: int = TOP_K,
                 min_count: int = MIN_COUNT, predicting: Progress | None = None,
                 explaining: Progress | None = None) -> ErrorReport:
    table = predict_dataset(classifier, examples, dataset, store=store, progress=predicting, model=model)
    config = {"model": model, "model_fingerprint": classifier.fingerprint, "dataset": dataset,
              "examples": len(examples), "method": method, "top_k": k, "max_explained": max_explained,
              "min_count": min_count, "predictions_run": table.run_id}
    rows = confident_errors_first(table.frame)
    summary = shortcuts = None
    if table.has_labels:
        errors = apply_filters(rows, Filters(misclassified=True)).head(max_explained)
        if len(errors):
            correct = correct_rows(table.frame, [], len(errors))
            summary = summarize_slice(classifier, [examples[i] for i in errors["index"]],
                                      [examples[i] for i in correct["index"]], method, k=k, progress=explaining)
        labelled = table.labelled
        shortcuts = shortcut_words([t if p is None else f"{t} {p}" for t, p in zip(labelled["text"], labelled["pair"])],
                                   list(labelled["correct"].eq(False).astype(bool)), min_count=min_count)
    top = summary.top_words if summary is not None else {}
    explained = set(summary.slice_ids) if summary is not None else set()
    rows = rows.assign(top_words=[" ".join(top[i]) if i in explained else None for i in rows["id"]])
    return ErrorReport(table, rows[TABLE_COLUMNS].reset_index(drop=True), summary, shortcuts, config)
