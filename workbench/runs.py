"""Dataset runs from the library: the command line's ``cli.py evaluate``, the same stored, resumable run (the same
run id for the same model, data, methods, metrics and options: a second call reuses the finished cells), on any
executor (``local``, ``processes``, ``ray``)."""
from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

import settings
from corpora.objects import examples_from, examples_rows, plain_cell
from evaluation.runs.store import ResultStore
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import results_frame
from models import UserFacingError

DEFAULT_EVALUATORS = ("eraser",)  # ERASER comprehensiveness / sufficiency (DeYoung et al. 2020)


@dataclass
class DatasetRun:
    """A finished (or stopped) run: ``summary`` is method x metric with the 95 % bootstrap CI and the random
    band, ``values`` one row per (example, method, metric)."""

    run_id: str
    summary: pd.DataFrame
    values: pd.DataFrame
    errors: dict[str, str]


def evaluate(model: str, data: Any, methods: Sequence[str], evaluators: Sequence[str] = DEFAULT_EVALUATORS,
             limit: int | None = None, options: dict | None = None, executor: str = "local",
             workers: int | None = None, store: ResultStore | None = None, progress=None,
             text_column: str = "text", label_column: str | None = "label",
             pair_column: str | None = "pair") -> DatasetRun:
    """Evaluate ``methods`` on a dataset with metric groups ``evaluators`` (``cli.py evaluate --list-metrics``).

    ``model``: a model spec (``"default-quick"``, a folder): each worker loads it itself. ``data``: a dataset id
    (``"sst2:dev"``, ``"file:/x.csv"``) or Python rows (a list, a DataFrame, a Hugging Face Dataset), which are
    written once to the workbench's cache under their content hash, so the run is resumable like any other.
    ``options``: the run's options (``target``, ``seed``, ``random_orderings``, removal options) as on the page.
    """
    if not isinstance(model, str):
        raise UserFacingError("A dataset run names its model by spec (e.g. 'default-quick' or a folder): each "
                              "worker loads it. Pass the spec you gave load_model.")
    dataset = data if isinstance(data, str) else _stored_rows(data, text_column, label_column, pair_column)
    options = {"target": "predicted", "operator": None, "exclude_special": True, "seed": 0, "random_orderings": 10,
               **(options or {})}
    store, summary = run_evaluation(model, dataset, list(methods), list(evaluators), limit=limit, options=options,
                                    store=store, executor=executor, progress=progress, workers=workers)
    return DatasetRun(summary.run_id, run_table(store, summary.run_id), results_frame(store, summary.run_id),
                      dict(summary.errors))


def _labels_as_given(data: Any, label_column: str) -> list:
    rows = examples_rows(data)
    return [None if row.get(label_column) is None else plain_cell(row.get(label_column)) for row in rows]


def _stored_rows(data: Any, text_column: str, label_column: str | None, pair_column: str | None) -> str:
    """``file:`` id of the rows written as JSON lines under the cache, named by their content."""
    examples = examples_from(data, text_column, label_column, pair_column)  # validated here, with row numbers
    # the labels as given (a name or an index), matched to the model's labels when the run loads the file
    given = [None] * len(examples) if label_column is None else _labels_as_given(data, label_column)
    rows = [{"text": e.text, **({"pair": e.pair} if e.pair is not None else {}),
             **({"label": label} if label is not None else {})} for e, label in zip(examples, given)]
    content = "\n".join(json.dumps(row, ensure_ascii=False, sort_keys=True) for row in rows) + "\n"
    folder = settings.cache_dir() / "datasets"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"rows-{hashlib.sha256(content.encode()).hexdigest()[:16]}.jsonl"
    if not path.exists():
        path.write_text(content, encoding="utf-8")
    return f"file:{path}"
