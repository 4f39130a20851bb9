"""The predictions table of a dataset: text, gold label, prediction, confidence, correctness and length per example.

Predictions are computed in batches: the examples are sorted by token length and cut into chunks, each chunk is one
``predict_proba`` call on its encodings (which pads each batch to its own longest input), and each finished chunk
lands in the result store at once. The run is keyed by the model's fingerprint and a hash of the dataset's content
(texts, pairs, labels), so the same table reopens instantly, a stopped computation resumes, and an edited user file
is predicted again.
"""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from corpora import Example
from evaluation.runs.store import ResultStore, run_id_for
from models import TextClassifier
from models.documents import read_input
from models.metering import WorkStopped, estimate_seconds, runs_at_once
from models.windows import is_document

KIND = "predictions"
CHUNK = 128  # examples per stored cell: a stop loses at most one chunk, and progress moves every chunk
COLUMNS = ["index", "id", "text", "pair", "gold", "gold_label", "prediction", "predicted_label", "confidence",
           "correct", "length"]
LABELS_NEEDED = ("This dataset has no gold labels: the table shows the model's predictions only. The errors view "
                 "(misclassified examples, the confusion matrix, slices and shortcut words) needs labels: give the "
                 "file a 'label' column.")

Progress = Callable[[int, int], None]  # examples done, total


def dataset_hash(examples: list[Example]) -> str:
    """Content hash of a dataset: what its predictions depend on (ids, texts, pairs, labels), in order."""
    digest = hashlib.sha256()
    for example in examples:
        digest.update(json.dumps([example.id, example.text, example.pair, example.label]).encode())
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class PredictionTable:
    """One row per example (``COLUMNS``); ``has_labels`` is False when no example has a gold label."""

    frame: pd.DataFrame
    labels: list[str]
    run_id: str
    dataset: str
    model: str
    seconds: float  # computing (or reopening) time
    computed: int = 0  # examples predicted by this call (0: every prediction was read from the store)

    @property
    def has_labels(self) -> bool:
        return bool(self.frame["gold"].notna().any())

    @property
    def labelled(self) -> pd.DataFrame:
        """The rows with a gold label (the only ones that can be right or wrong)."""
        return self.frame[self.frame["gold"].notna()]

    @property
    def accuracy(self) -> float | None:
        labelled = self.labelled
        return float(labelled["correct"].astype(bool).mean()) if len(labelled) else None


def _chunks(lengths: list[int], size: int | None = None) -> list[list[int]]:
    """Example indices sorted by token length (stable, so a resumed run cuts the same chunks), ``size`` (default
    CHUNK) at a time."""
    size = size or CHUNK
    order = np.argsort(np.asarray(lengths), kind="stable").tolist()
    return [order[start:start + size] for start in range(0, len(order), size)]


def fill_chunks(store: ResultStore, run_id: str, cells: dict, n_examples: int, encode: Callable[[], list],
                compute: Callable[[list[int], list], list[dict]], what: str, size: int | None = None,
                progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> int:
    """The chunks of a per-example run not stored yet, computed and stored one by one (``cells`` updated); a stop
    between chunks raises ``WorkStopped`` with every finished chunk kept. ``encode()`` gives every example's
    encoding (called only when something is missing), ``compute(indices, encodings)`` a chunk's rows. Returns how
    many examples were computed."""
    if sum(len(c["rows"]) for c in cells.values()) >= n_examples:
        return 0
    encodings = encode()
    chunks = _chunks([e.n_tokens for e in encodings], size)
    done = sum(len(chunk) for number, chunk in enumerate(chunks) if f"chunk-{number:05d}" in cells)
    computed = 0
    if progress:
        progress(done, n_examples)
    store.set_status(run_id, "running")
    for number, chunk in enumerate(chunks):
        key = f"chunk-{number:05d}"
        if key in cells:
            continue
        if should_stop is not None and should_stop():
            store.set_status(run_id, "stopped")
            raise WorkStopped(f"Stopped after {done} of {n_examples} {what}; they are kept.")
        chunk_started = time.perf_counter()
        cells[key] = {"rows": compute(chunk, [encodings[i] for i in chunk])}
        store.put_cell(run_id, key, cells[key], seconds=time.perf_counter() - chunk_started)
        done += len(chunk)
        computed += len(chunk)
        if progress:
            progress(done, n_examples)
    store.set_status(run_id, "done")
    return computed


def run_config(classifier: TextClassifier, examples: list[Example]) -> dict:
    """What the stored run is keyed by: the weights and the dataset's content (not their names)."""
    return {"model_fingerprint": classifier.fingerprint, "dataset_hash": dataset_hash(examples),
            "labels": list(classifier.labels)}


def stored_run(store: ResultStore, classifier: TextClassifier, examples: list[Example]) -> str | None:
    """The id of the finished predictions of this model on this dataset, or None."""
    run = store.get_run(run_id_for(KIND, run_config(classifier, examples)))
    return run["id"] if run is not None and run["status"] == "done" else None


def estimated_cost(classifier: TextClassifier, examples: list[Example]) -> tuple[float, bool]:
    """The cost model's estimate of predicting ``examples`` (one forward pass each, at their mean token length):
    (seconds at the measured speed, whether it runs without a click: its work units against the auto-run budget at
    the nominal rate, the same under any load, ``models.metering`` rule (g))."""
    if not examples:
        return 0.0, True
    pairs = [e.pair for e in examples if e.pair is not None]
    batch = classifier.tokenize_texts([e.text for e in examples], pairs if len(pairs) == len(examples) else None)
    mean_tokens = float(np.mean([len(ids) for ids in batch.input_ids]))
    return (estimate_seconds(classifier, forward=len(examples), backward=0, n_tokens=mean_tokens),
            runs_at_once(classifier, forward=len(examples), backward=0, n_tokens=mean_tokens))


def predict_dataset(classifier: TextClassifier, examples: list[Example], dataset: str,
                    store: ResultStore | None = None, progress: Progress | None = None,
                    should_stop: Callable[[], bool] | None = None, model: str | None = None) -> PredictionTable:
    """The predictions table; chunks already in the store are read, the rest computed and stored.

    ``should_stop`` is checked between chunks (``WorkStopped`` then, with every finished chunk kept).
    """
    started = time.perf_counter()
    store = store or ResultStore()
    model = model or classifier.name
    run_id = store.create_run(KIND, run_config(classifier, examples), total=len(examples),
                              title=f"predictions of {model} on {dataset} ({len(examples)} examples)")
    cells = store.cells(run_id)

    def probabilities_of(chunk: list[int], batch: list) -> list[dict]:
        probabilities = np.stack([classifier.proba_of(e) for e in batch]) if any(map(is_document, batch)) \
            else classifier.predict_proba(batch)
        return [{"index": i, "probabilities": [float(p) for p in row]} for i, row in zip(chunk, probabilities)]

    computed = fill_chunks(store, run_id, cells, len(examples),
                           lambda: [read_input(classifier, e.text, e.pair) for e in examples],  # long texts in windows
                           probabilities_of, "predictions", progress=progress, should_stop=should_stop)
    frame = table_frame(examples, cells, classifier.labels)
    return PredictionTable(frame, list(classifier.labels), run_id, dataset, model, time.perf_counter() - started,
                           computed)


def table_frame(examples: list[Example], cells: dict, labels: list[str]) -> pd.DataFrame:
    """The rows of the table from the stored probabilities (dataset order)."""
    probabilities = np.zeros((len(examples), len(labels)))
    for cell in cells.values():
        for row in cell["rows"]:
            probabilities[row["index"]] = row["probabilities"]
    predicted = probabilities.argmax(axis=1)
    gold = pd.array([e.label for e in examples], dtype="Int64")
    frame = pd.DataFrame({
        "index": np.arange(len(examples)),
        "id": [e.id for e in examples],
        "text": [e.text for e in examples],
        "pair": [e.pair for e in examples],
        "gold": gold,
        "gold_label": [e.label_name for e in examples],
        "prediction": predicted,
        "predicted_label": [labels[p] for p in predicted],
        "confidence": probabilities.max(axis=1) if len(examples) else np.zeros(0),
        "correct": pd.array([None if e.label is None else bool(e.label == p) for e, p in zip(examples, predicted)],
                            dtype="boolean"),
        "length": [len(e.words) for e in examples],
    })
    return frame[COLUMNS]
