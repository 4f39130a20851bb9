"""Attacks over a dataset: one job cell per example (every chosen method), in the result store, with bootstrap CIs.

The examples are attacked in batches (``attack_many``: several inputs' optimizations as one): the cells
are ordered batch by batch, and the run's batch hook (``batched_attacks``) computes a batch when its first cell
runs and serves the others, so each cell still lands in the store on its own and a stopped run resumes losing at
most one batch. Alone (the app, Ray) a cell attacks its example by itself: the same values up to float32
reordering.

Every example is read whole (``models.documents.read_input``): a text longer than the model's window is attacked
over its windows (``documents.py``), under the run's window options (``spec["documents"]``, present only when
given so older runs keep their ids; ``allow_long`` there opts in to documents over ``MAX_ATTACK_WINDOWS``).

Paper 003 section 4.1 attacked 16 datapoints per model x dataset x method and dropped inputs too short for
k = 15 % of the length to be at least 1 ("four cases" on SST); those are counted here as skipped, with the reason.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict

import pandas as pd

from corpora import load_dataset
from evaluation.adversarial.attack import attack_groups, attack_many, rows_per_input
from evaluation.adversarial.config import ATTACKED_METHODS, AttackConfig, config_for
from evaluation.adversarial.result import AttackError
from evaluation.runs.header import create_dataset_run
from evaluation.runs.jobs import Cell, CellStopped, Progress, RunSummary, current_stop_check, run_cells
from evaluation.runs.store import ResultStore
from evaluation.statistics import bootstrap_ci
from evaluation.summary import cell_rows_frame
from models import InputError, ModelError, cached_classifier
from models.documents import read_input

# the run options that decide how an example is read (the others, granularity and spans, mean nothing to the attack)
READING_OPTIONS = ("long_documents", "window_size", "window_stride", "window_aggregate", "allow_long")

KIND = "adversarial"
MEASURES = ("rank_change", "top_k_sum_change", "probability_change", "class_kept")


def attack_cell(spec: dict) -> dict:
    """Every method's attack on one example (depends only on ``spec``). Inside ``batched_attacks`` the example is
    attacked together with the other examples of its batch (``spec["batch"]``), the first time one of them runs;
    alone otherwise (the Ray executor, the app)."""
    plan = _PLAN.get()
    if plan is not None and spec["index"] in plan.batch_of:
        return plan.result(spec)
    return attack_examples([spec])[0]


def attack_examples(specs: list[dict]) -> list[dict]:
    """The cells of several examples of one run, each method's attacks of all of them optimized together
    (``attack_many``: padded batches under the token budget; equal to one at a time up to float32 reordering)."""
    spec = specs[0]  # one run: the same model, dataset, methods and settings in every cell
    classifier = cached_classifier(spec["model"])
    examples = load_dataset(spec["dataset"], limit=max(s["index"] for s in specs) + 1,
                            label_names=classifier.labels)
    chosen = [examples[s["index"]] for s in specs]
    options = spec.get("documents") or {}
    read, unread = [], {}
    for position, example in enumerate(chosen):
        try:
            read.append((position, read_input(classifier, example.text, example.pair, options)))
        except InputError as error:  # e.g. a very long text without the opt-in: skipped with its message
            unread[position] = str(error)
    config = config_for(None, **spec["config"])
    words = dict((position, encoding.n_words) for position, encoding in read)
    cells = [{"example_id": example.id, "words": words.get(position, 0), "rows": [], "skipped": {}, "attacked": {}}
             for position, example in enumerate(chosen)]
    for method in spec["methods"]:
        for position, message in unread.items():
            cells[position]["skipped"][method] = message
        # the run's stop check at every step: a batch takes minutes
        results = attack_many(classifier, [encoding for _, encoding in read], method, config,
                              should_stop=current_stop_check(), allow_long=bool(options.get("allow_long")))
        for cell, result in zip([cells[position] for position, _ in read], results):
            if isinstance(result, AttackError):
                cell["skipped"][method] = str(result)
                continue
            cell["rows"] += [{"method": method, "metric": name, "value": value}
                             for name, value in result.measures().items()]
            cell["rows"].append({"method": method, "metric": "steps_taken", "value": float(result.steps_taken)})
            cell["attacked"][method] = {
                "replaced_words": result.replaced_words, "k": result.k,
                "original_top": [result.tokens[result.positions[i]] for i in
                                 result.original_shares.argsort()[::-1][:result.k]],
                "attacked_top": [result.tokens[result.positions[i]] for i in
                                 result.attacked_shares.argsort()[::-1][:result.k]]}
            if result.stop_reason == "stopped by the user":
                raise CellStopped()
    return cells


class _BatchPlan:
    """The batches of a window of cells (``spec["batch"]``), each computed when its first cell runs and served
    to its cells; a stopped run loses at most the batch it was in."""

    def __init__(self, specs: list[dict]):
        self.specs = {s["index"]: s for s in specs}
        self.batch_of = {s["index"]: s.get("batch", s["index"]) for s in specs}
        self.done: dict[int, dict] = {}

    def result(self, spec: dict) -> dict:
        index = spec["index"]
        if index not in self.done:
            members = [s for i, s in self.specs.items() if self.batch_of[i] == self.batch_of[index]]
            try:
                cells = attack_examples(members)
            except CellStopped:
                raise
            except Exception:  # noqa: BLE001 (each cell then meets its own error alone and records it)
                return attack_examples([spec])[0]
            self.done.update((s["index"], cell) for s, cell in zip(members, cells))
        return self.done.pop(index)


_PLAN: ContextVar[_BatchPlan | None] = ContextVar("adversarial_batches", default=None)


@contextmanager
def batched_attacks(specs: list[dict]):
    """The batch hook of an attack run (``run_cells(batch_hook=...)``): the window's examples attacked batch by
    batch (``attack_examples``) while its cells run."""
    token = _PLAN.set(_BatchPlan(specs))
    try:
        yield
    finally:
        _PLAN.reset(token)


def cell_batches(classifier, encodings: list, methods: list[str], config: AttackConfig) -> list[list[int]]:
    """Example indices in the batches their attacks share: ``attack_groups`` for the method with the most rows
    per input (IG's loop path points), so every method's batch fits the token budget."""
    rows = max(rows_per_input(method, config) for method in methods)
    return attack_groups(classifier, encodings, rows)


def start_attacks(model: str, dataset: str, methods: list[str], limit: int | None = 16,
                  config: AttackConfig | None = None, store: ResultStore | None = None,
                  documents: dict | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells. ``documents``: how long texts are read (``READING_OPTIONS``;
    none: whole, in the model's windows, the mean rule)."""
    unknown = [m for m in methods if m not in ATTACKED_METHODS]
    if not methods or unknown:
        raise ModelError(f"The attack needs differentiable methods; choose from: {', '.join(ATTACKED_METHODS)}"
                         + (f" (not: {', '.join(unknown)})." if unknown else "."))
    config = config or AttackConfig()
    store = store or ResultStore()
    classifier = cached_classifier(model)
    examples = load_dataset(dataset, limit=limit, label_names=classifier.labels)
    if not examples:
        raise ModelError(f"Dataset '{dataset}' has no examples.")
    settings = {"methods": list(methods), "config": asdict(config)}
    reading = {key: value for key, value in (documents or {}).items() if key in READING_OPTIONS and value}
    if reading:
        settings["documents"] = reading
    run_id, _ = create_dataset_run(store, KIND, f"adversarial ({config.objective})", model, classifier.fingerprint,
                                   dataset, examples, settings)
    # cells in batch order (length-sorted, ``cell_batches``): a batch's cells run one after another
    encodings = []
    for example in examples:
        try:
            encodings.append(read_input(classifier, example.text, example.pair, reading))
        except InputError:  # its cell records the message (attack_examples); batched by its cut length
            encodings.append(classifier.encode(example.text, example.pair))
    cells = [Cell(key=examples[index].id, spec={"model": model, "dataset": dataset, "index": index, "batch": batch,
                                                **settings})
             for batch, group in enumerate(cell_batches(classifier, encodings, methods, config)) for index in group]
    return store, run_id, cells


def run_attacks(model: str, dataset: str, methods: list[str], limit: int | None = 16,
                config: AttackConfig | None = None, store: ResultStore | None = None, executor: str = "local",
                progress: Progress | None = None, should_stop=None, documents: dict | None = None
                ) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_attacks(model, dataset, methods, limit, config, store, documents)
    summary = run_cells(store, run_id, cells, attack_cell, executor=executor, progress=progress,
                        should_stop=should_stop, batch_hook=batched_attacks if executor == "local" else None)
    return store, summary


def results_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
    """One row per (example, method, measure)."""
    return cell_rows_frame(store, run_id, ["method", "metric", "value"])


def skipped_inputs(store: ResultStore, run_id: str) -> dict[str, int]:
    """Per method: how many examples were too short (or otherwise refused) to attack."""
    counts: dict[str, int] = {}
    for cell in store.cells(run_id).values():
        for method in (cell.get("skipped") or {}):
            counts[method] = counts.get(method, 0) + 1
    return counts


def summarize(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Method x measure: mean, percentile-bootstrap 95 % CI and n (paper 003 section 4: 95 % CIs; seaborn's bootstrap in its code)."""
    rows = []
    for (method, metric), group in frame.groupby(["method", "metric"], sort=False):
        estimate = bootstrap_ci(group["value"].to_numpy(), seed=seed)
        rows.append({"method": method, "metric": metric, **estimate.to_dict()})
    return pd.DataFrame(rows, columns=["method", "metric", "mean", "low", "high", "n", "ci_method"])
