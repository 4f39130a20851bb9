"""Dataset-level evaluation: any evaluators (metric groups) x any methods over N examples of a dataset.

One job cell per example computes every method's explanation (through the explanation cache) and every
chosen evaluator on it; per-example values land in the result store as each example finishes, so a run
resumes after a stop and a finished run reopens instantly. ``summarize`` gives method x metric means with
bootstrap 95 % confidence intervals.
"""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd

import importlib

import numpy as np

from corpora import load_dataset
from corpora.known_feature import NAME as KNOWN_FEATURE, load_known_feature
from explainers import create
from explainers.cache import explain_cached
from models import cached_classifier

from evaluation import targets
from evaluation.runs.jobs import Cell, Progress, RunSummary, run_cells
from evaluation.metric import EVALUATORS, METRICS
from evaluation.statistics import bootstrap_ci
from evaluation.runs.store import ResultStore

KIND = "evaluation"
RANDOM_METHOD = "random baseline"  # = faithfulness_random.RANDOM_METHOD
DEFAULT_RANDOM_ORDERINGS = 10
# Modules that register evaluators; a module not written yet is skipped (engineers add theirs here).
EVALUATOR_MODULES = ("evaluation.faithfulness.presets", "evaluation.faithfulness.bias",
                     "evaluation.faithfulness.known_feature", "evaluation.plausibility.metrics")


def load_evaluators() -> dict:
    """Import every module that registers evaluators (so ``--metrics eraser`` etc. resolve); returns EVALUATORS."""
    for module in EVALUATOR_MODULES:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            if error.name != module:
                raise
    return EVALUATORS


def load_examples(dataset_id: str, limit: int | None = None, label_names=None):
    """``load_dataset`` plus the synthetic known-feature task (``known-feature:<train|dev>[:<seed>]``);
    ``label_names``: the model's labels, so a user file's gold labels are the model's classes."""
    if dataset_id.split(":")[0] == KNOWN_FEATURE:
        return load_known_feature(dataset_id, limit=limit)
    return load_dataset(dataset_id, limit=limit, label_names=label_names)


def parse_method(spec: str) -> tuple[str, str | None]:
    """'method' or 'method:preset'."""
    method, _, preset = spec.partition(":")
    return method, preset or None


def resolve_evaluators(names: list[str]) -> list[str]:
    """Evaluator ids from evaluator ids or metric ids (a metric id selects its evaluator)."""
    load_evaluators()
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
    """The work of one cell: every method and evaluator on one example (depends only on ``spec``).

    Stores per method the values, the curves behind them (removal metrics) and, unless
    ``options['random_orderings']`` is 0, the random baseline's values over that many seeded orderings.
    Removal metrics of every method and of the random orderings are scored together, one engine call per
    removal operator (``faithfulness_random.methods_and_random``); other evaluators run per method.
    """
    load_evaluators()
    classifier = cached_classifier(spec["model"])
    example = load_examples(spec["dataset"], limit=spec["index"] + 1, label_names=classifier.labels)[spec["index"]]
    encoding = classifier.encode(example.text, example.pair)
    options = spec.get("options", {})
    target = targets.explain_target(options.get("target"), example.label)
    n_random = int(options.get("random_orderings", DEFAULT_RANDOM_ORDERINGS))
    applicable = [e for e in spec["evaluators"] if _applies(EVALUATORS[e], example)]
    explained, explanations = {}, {}
    for method_spec in spec["methods"]:
        method, preset = parse_method(method_spec)
        explanation = explain_cached(create(method, preset=preset), classifier, encoding, target)
        explained[method_spec] = explanation
        explanations[method_spec] = {"words": list(explanation.words),
                                     "scores": [float(x) for x in explanation.word_scores],
                                     "target": explanation.target, "seconds": explanation.provenance["seconds"]}
    batched, random_values, curves = _removal_batch(classifier, encoding, example, options, applicable, explained,
                                                    n_random if explained else 0)
    rows = []
    for method_spec, explanation in explained.items():
        seen: set[str] = set()
        for evaluator_id in applicable:
            values = batched[evaluator_id][method_spec] if evaluator_id in batched else \
                EVALUATORS[evaluator_id].compute(classifier, encoding, explanation, example, options)
            for metric_id, value in values.items():
                if metric_id not in seen:
                    seen.add(metric_id)
                    rows.append({"method": method_spec, "metric": metric_id, "value": float(value)})
            for metric_id, curve in getattr(values, "curves", {}).items():
                curves.setdefault(method_spec, {})[metric_id] = curve
    if n_random > 0 and explained:
        others = [e for e in applicable if e not in batched]
        if others:
            random_values.update({k: v for k, v in _generic_random(classifier, encoding, example, options, others,
                                                                   n_random, target).items() if k not in random_values})
        rows += [{"method": RANDOM_METHOD, "metric": metric_id, "value": _mean_or_nan(vals), "orderings": vals}
                 for metric_id, vals in random_values.items()]
    return {"example_id": example.id, "label": example.label, "rows": rows, "explanations": explanations,
            "curves": curves, "n_words": encoding.n_words}


def _mean_or_nan(values) -> float:
    """Mean of the finite values; NaN (not a warning) when a metric is undefined for every draw."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return float(finite.mean()) if finite.size else float("nan")


def _applies(evaluator, example) -> bool:
    if evaluator.needs_rationale and example.rationale is None:
        return False
    return not (evaluator.needs_gold_label and example.label is None)


def _removal_batch(classifier, encoding, example, options, evaluator_ids, explained, n_random):
    """Removal evaluators: every method and the random orderings in one engine call per operator.

    Returns ({evaluator: {method: MetricValues}}, {metric: random values}, {RANDOM_METHOD: {metric: curve}}).
    """
    from evaluation.faithfulness.curves import MetricValues, RemovalOptions, provenance
    from evaluation.faithfulness.presets import removal_metrics_of
    from evaluation.faithfulness.random_band import methods_and_random

    groups: dict[bool, list] = {}
    members: dict[str, tuple] = {}
    for evaluator_id in evaluator_ids:
        metrics = removal_metrics_of(evaluator_id, options)
        if metrics is None:
            continue
        ignores = bool(getattr(EVALUATORS[evaluator_id].compute, "ignores_operator_option", False))
        group = groups.setdefault(ignores, [])
        group += [m for m in metrics if m.id not in {g.id for g in group}]
        members[evaluator_id] = (ignores, metrics)
    batched = {e: {} for e in members}
    random_values: dict[str, list[float]] = {}
    curves: dict[str, dict] = {}
    scores = {name: e.word_scores for name, e in explained.items()}
    for ignores, metrics in groups.items():
        metric_options = {**options, "operator": None} if ignores else options
        removal = RemovalOptions.from_dict(metric_options)
        per_method, baseline = methods_and_random(classifier, encoding, metrics, scores, removal, example,
                                                  next(iter(explained.values()), None), n_random,
                                                  filler_options=metric_options)
        for evaluator_id, (group, own) in members.items():
            if group != ignores:
                continue
            for name, result in per_method.items():
                batched[evaluator_id][name] = MetricValues(
                    {m.id: result.values[m.id] for m in own},
                    curves={m.id: result.curves[m.id].to_dict() for m in own},
                    details={m.id: provenance(m, removal) for m in own})
        if n_random > 0:
            for metric in metrics:
                random_values.setdefault(metric.id, baseline.values[metric.id])
                curves.setdefault(RANDOM_METHOD, {}).setdefault(metric.id, baseline.curves[metric.id])
    return batched, random_values, curves


def _generic_random(classifier, encoding, example, options, evaluator_ids, n, target) -> dict[str, list[float]]:
    """Random baseline of evaluators that read scores rather than rankings (uniformly random word scores)."""
    from evaluation.faithfulness.random_band import generic_random_values

    seed = int(options.get("seed", 0) or 0)
    explained = target if target is not None else int(np.argmax(classifier.logits_of(encoding)))
    values: dict[str, list[float]] = {}
    for evaluator_id in evaluator_ids:
        for metric_id, vals in generic_random_values(EVALUATORS[evaluator_id], classifier, encoding, example,
                                                     options, explained, n, seed).items():
            values.setdefault(metric_id, vals)
    return values


def start_evaluation(model: str, dataset: str, methods: list[str], evaluators: list[str], limit: int | None = None,
                     options: dict | None = None, store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells without running them."""
    store = store or ResultStore()
    evaluators = resolve_evaluators(evaluators)
    options = {"random_orderings": DEFAULT_RANDOM_ORDERINGS, **(options or {})}
    targets.parse(options.get("target"))  # a bad target fails here, before any work
    classifier = cached_classifier(model)
    examples = load_examples(dataset, limit=limit, label_names=classifier.labels)
    config = {"model": model, "model_fingerprint": classifier.fingerprint, "dataset": dataset,
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


def cell_rows_frame(store: ResultStore, run_id: str, columns: list[str]) -> pd.DataFrame:
    """The ``rows`` of every stored cell as one table (a column ``example_id`` names the cell); failed cells
    (no rows) are left out."""
    records = [{"example_id": key, **row} for key, cell in store.cells(run_id).items() for row in cell.get("rows", [])]
    return pd.DataFrame.from_records(records, columns=["example_id", *columns])


def results_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
    """One row per (example, method, metric) with the value."""
    return cell_rows_frame(store, run_id, ["method", "metric", "value"])


def random_orderings_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
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
    from evaluation.faithfulness.random_band import compare_with_random

    rows = []
    random_part = frame[frame["method"] == RANDOM_METHOD] if len(frame) else frame
    for (method, metric), group in frame.groupby(["method", "metric"], sort=False):
        estimate = bootstrap_ci(group["value"].to_numpy())
        info = METRICS.get(metric)
        row = {"method": method, "metric": metric, **asdict(estimate),
               "higher_is_better": None if info is None else info.higher_is_better}
        reference = random_part[random_part["metric"] == metric]
        if method != RANDOM_METHOD and len(reference):
            paired = group.merge(reference[["example_id", "value"]], on="example_id", suffixes=("", "_random"))
            matrix = None
            if orderings is not None and len(orderings):
                wide = orderings[orderings["metric"] == metric].pivot_table(index="example_id", columns="ordering",
                                                                          values="value")
                matrix = wide.reindex(paired["example_id"]).to_numpy()
            comparison = compare_with_random(paired["value"].to_numpy(), paired["value_random"].to_numpy(), matrix,
                                             higher_is_better=True if info is None else info.higher_is_better)
            row.update({"random_mean": comparison.random.mean, "random_low": comparison.band[0],
                        "random_high": comparison.band[1], "diff_mean": comparison.difference.mean,
                        "diff_low": comparison.difference.low, "diff_high": comparison.difference.high,
                        "vs_random": comparison.verdict})
        elif method == RANDOM_METHOD and orderings is not None and len(orderings):
            from evaluation.faithfulness.random_band import band

            per_ordering = orderings[orderings["metric"] == metric].groupby("ordering")["value"].mean()
            low, high = band(per_ordering.to_numpy())
            row.update({"random_mean": estimate.mean, "random_low": low, "random_high": high})
        rows.append(row)
    return pd.DataFrame(rows)
