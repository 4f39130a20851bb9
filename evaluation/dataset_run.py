"""Dataset-level evaluation: any evaluators (metric groups) x any methods over N examples of a dataset.

One job cell per example computes every method's explanation (through the explanation cache) and every
chosen evaluator on it; per-example values land in the result store as each example finishes, so a run
resumes after a stop and a finished run reopens instantly. ``summarize`` gives method x metric means with
bootstrap 95 % confidence intervals.
"""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from corpora import load_dataset
from explainers import create
from explainers.cache import explain_cached
from models import cached_classifier

from .jobs import Cell, Progress, RunSummary, run_cells
from .metric import EVALUATORS, METRICS
from .statistics import bootstrap_ci
from .store import ResultStore

KIND = "evaluation"


def parse_method(spec: str) -> tuple[str, str | None]:
    """'method' or 'method:preset'."""
    method, _, preset = spec.partition(":")
    return method, preset or None


def resolve_evaluators(names: list[str]) -> list[str]:
    """Evaluator ids from evaluator ids or metric ids (a metric id selects its evaluator)."""
    chosen = []
    for name in names:
        if name in EVALUATORS:
            evaluator = name
        else:
            owners = [e.id for e in EVALUATORS.values() if any(m.id == name for m in e.metrics)]
            if not owners:
                raise KeyError(f"Unknown metric or metric group '{name}'. Known groups: {', '.join(EVALUATORS)}; "
                               f"metrics: {', '.join(METRICS)}.")
            evaluator = owners[0]
        if evaluator not in chosen:
            chosen.append(evaluator)
    return chosen


def evaluate_example(spec: dict) -> dict:
    """The work of one cell: every method and evaluator on one example (depends only on ``spec``)."""
    classifier = cached_classifier(spec["model"])
    example = load_dataset(spec["dataset"], limit=spec["index"] + 1)[spec["index"]]
    encoding = classifier.encode(example.text, example.pair)
    options = spec.get("options", {})
    target = example.label if options.get("target") == "gold" and example.label is not None else None
    rows, explanations = [], {}
    for method_spec in spec["methods"]:
        method, preset = parse_method(method_spec)
        explanation = explain_cached(create(method, preset=preset), classifier, encoding, target)
        explanations[method_spec] = {"words": list(explanation.words),
                                     "scores": [float(x) for x in explanation.word_scores],
                                     "target": explanation.target, "seconds": explanation.provenance["seconds"]}
        for evaluator_id in spec["evaluators"]:
            evaluator = EVALUATORS[evaluator_id]
            if evaluator.needs_rationale and example.rationale is None:
                continue
            values = evaluator.compute(classifier, encoding, explanation, example, options)
            rows += [{"method": method_spec, "metric": metric_id, "value": float(value)}
                     for metric_id, value in values.items()]
    return {"example_id": example.id, "label": example.label, "rows": rows, "explanations": explanations}


def start_evaluation(model: str, dataset: str, methods: list[str], evaluators: list[str], limit: int | None = None,
                     options: dict | None = None, store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells without running them."""
    store = store or ResultStore()
    evaluators = resolve_evaluators(evaluators)
    examples = load_dataset(dataset, limit=limit)
    config = {"model": model, "model_fingerprint": cached_classifier(model).fingerprint, "dataset": dataset,
              "limit": len(examples), "methods": methods, "evaluators": evaluators, "options": options or {}}
    run_id = store.create_run(KIND, config, total=len(examples),
                              title=f"{', '.join(evaluators)} on {dataset} ({len(examples)} examples), {model}")
    cells = [Cell(key=example.id, spec={"model": model, "dataset": dataset, "index": index, "methods": methods,
                                        "evaluators": evaluators, "options": options or {}})
             for index, example in enumerate(examples)]
    return store, run_id, cells


def run_evaluation(model: str, dataset: str, methods: list[str], evaluators: list[str], limit: int | None = None,
                   options: dict | None = None, store: ResultStore | None = None, executor: str = "local",
                   progress: Progress | None = None, should_stop=None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_evaluation(model, dataset, methods, evaluators, limit, options, store)
    summary = run_cells(store, run_id, cells, evaluate_example, executor=executor, progress=progress,
                        should_stop=should_stop)
    return store, summary


def results_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
    """One row per (example, method, metric) with the value; failed examples are left out."""
    records = []
    for key, cell in store.cells(run_id).items():
        for row in cell.get("rows", []):
            records.append({"example_id": key, **row})
    return pd.DataFrame.from_records(records, columns=["example_id", "method", "metric", "value"])


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Method x metric: mean, 95 % bootstrap CI and n, with the metric's direction."""
    rows = []
    for (method, metric), group in frame.groupby(["method", "metric"], sort=False):
        estimate = bootstrap_ci(group["value"].to_numpy())
        info = METRICS.get(metric)
        rows.append({"method": method, "metric": metric, **asdict(estimate),
                     "higher_is_better": None if info is None else info.higher_is_better})
    return pd.DataFrame(rows)
