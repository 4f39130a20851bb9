"""Dataset-level evaluation: any evaluators (metric groups) x any methods over N examples of a dataset.

One job cell per example computes every method's explanation (through the explanation cache, so a page's or an
earlier run's explanations are reused; methods that share a pass compute it once, ``explainers/shared_passes.py``)
and every chosen evaluator on it; per-example values land in the result store as each example finishes, so a run
resumes after a stop and a finished run reopens instantly. ``summarize`` gives method x metric means with
bootstrap 95 % confidence intervals.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import partial

import numpy as np

from corpora import load_dataset
from evaluation import targets
from evaluation.batch import Window, evaluate_batch
from evaluation.metric import EVALUATORS, RANDOM_METHOD, RunOptions
from evaluation.runs.header import create_dataset_run
from evaluation.runs.jobs import Cell, CellStopped, Progress, RunSummary, current_stop_check, run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite import paper_targets
from evaluation.suite.registry import resolve_evaluators
from explainers import cache as cache_module
from explainers import create_from_spec
from explainers.params import frozen_options, options_from
from explainers.shared_passes import cached_any_target, explain_all, prefill_ig_paths, shared_pass_of, sharing
from models import cached_classifier
from models.metering import WorkStopped, metered
from models.windows import is_document

KIND = "evaluation"
DEFAULT_RANDOM_ORDERINGS = RunOptions.random_orderings
_WINDOW: ContextVar[Window | None] = ContextVar("evaluation_window", default=None)  # the window being run here


def evaluate_example(spec: dict) -> dict:
    """The work of one cell: every method and evaluator on one example (depends only on ``spec``).

    Stores per method the values and the curves behind them and, unless ``options['random_orderings']`` is 0,
    the random baseline's values over that many seeded draws. The evaluators' batch hooks do the work
    (``evaluation.batch.evaluate_batch``): e.g. every removal metric of every method and of the random
    orderings is scored together, one engine call per removal operator.

    The cell runs in its own ``sharing()`` block (joining its window's, under the local and processes executors'
    batch hook), so its removal curves reuse leave-one-out's rows whatever the executor: a Ray task, outside any
    block, computed those rows again in other batches and gave values a float32 rounding apart.
    """
    with sharing():
        return _evaluate_example(spec)


def _evaluate_example(spec: dict) -> dict:
    window = _WINDOW.get()
    if window is None or not window.holds(spec):  # a cell outside its window's hook (Ray, a single call)
        window = Window([spec])
    classifier = window.classifier
    example, encoding = window.example(spec["index"]), window.encoding(spec["index"])  # documents in windows, never cut
    options = frozen_options(spec.get("options"))  # the run's (shared by its cells) or, alone, this cell's
    run = options_from(RunOptions, options)
    target = targets.explain_target(run.target, example.label)
    applicable = [e for e in spec["evaluators"] if EVALUATORS[e].applies_to(example)]
    explained, explanations = {}, {}
    # served from the cache where any page or earlier run left them; the rest share their passes
    computed = explain_all([create_from_spec(m, contrast=run.contrast) for m in spec["methods"]], classifier, encoding,
                           target)
    for method_spec, explanation in zip(spec["methods"], computed):
        if explanation is None:  # explain_all gives None only to an on_error hook, and none is passed here
            raise RuntimeError(f"{method_spec} returned no explanation and no error")
        explained[method_spec] = explanation
        explanations[method_spec] = {"words": list(explanation.words),
                                     "scores": [float(x) for x in explanation.word_scores],
                                     "target": explanation.target, "seconds": _seconds(explanation)}
    n_random = run.random_orderings if explained else 0
    batch = evaluate_batch(applicable, classifier, encoding, example, explained, options, n_random)
    rows: list[dict] = []
    curves: dict[str, dict] = {}  # method -> metric id -> its curve
    # rows of the methods, then of any other row an evaluator names (agreement's pairs, "A vs B")
    named = dict.fromkeys([*explained, *(name for per in batch.values.values() for name in per)])
    for method_spec in named:
        seen: set[str] = set()
        for evaluator_id in applicable:
            values = batch.values[evaluator_id].get(method_spec)
            if values is None:
                continue
            for metric_id, value in values.items():
                if metric_id not in seen:
                    seen.add(metric_id)
                    row = {"method": method_spec, "metric": metric_id, "value": float(value)}
                    if getattr(values, "details", {}).get(metric_id, {}).get("ill_conditioned"):
                        row["ill_conditioned"] = True  # kept, left out of the means (``summarize``)
                    rows.append(row)
            for metric_id, curve in getattr(values, "curves", {}).items():
                curves.setdefault(method_spec, {})[metric_id] = curve
    if batch.random_curves:
        curves[RANDOM_METHOD] = batch.random_curves
    # ill-conditioning is a property of the input (soft metrics: its all-masked denominator), so the random
    # baseline's row of a metric is flagged with the methods' rows of that metric
    flagged = {row["metric"] for row in rows if row.get("ill_conditioned")}
    rows += [{"method": RANDOM_METHOD, "metric": metric_id, "value": _mean_or_nan(vals), "orderings": vals,
              **({"ill_conditioned": True} if metric_id in flagged else {})} for metric_id, vals in batch.random.items()]
    return {"example_id": example.id, "label": example.label, "rows": rows, "explanations": explanations,
            "curves": curves, "n_words": encoding.n_words}


@contextmanager
def batched_gradient_passes(specs: list[dict]):
    """The batch hook of an evaluation run: the IG paths the window's cells will ask for, computed
    for several inputs per batch (``prefill_ig_paths``) and served to the cells from one ``sharing()`` block, then
    each chosen evaluator's ``window_hook`` (e.g. NAOPC's bounds of the window's inputs in lockstep).
    Inputs whose explanation is already cached are left out. A failure here only loses the speed-up: each cell
    then computes its own path (and records its own error)."""
    window = Window(specs)  # the window's texts read once, for the hooks and the cells
    token = _WINDOW.set(window)
    try:
        with sharing() as memo:
            _prefill_window(window, memo is not None)
            yield
    finally:
        _WINDOW.reset(token)


def _prefill_window(window: Window, sharing_passes: bool) -> None:
    """The work shared ahead: the IG paths (only where passes are shared), then each evaluator's hook."""
    steps = [_prefill_ig_paths] if sharing_passes else []
    steps += [partial(_run_hook, EVALUATORS[e]) for e in window.spec["evaluators"] if EVALUATORS[e].window_hook]
    for step in steps:
        try:
            with metered(current_stop_check()):
                step(window)
        except WorkStopped as stop:
            raise CellStopped() from stop
        except Exception:  # noqa: BLE001 (only the speed-up is lost: the cells do their own work, meet the error)
            pass


def _run_hook(chosen, window: Window) -> None:
    chosen.window_hook(chosen, window)


def _prefill_ig_paths(window: Window) -> None:
    spec = window.spec  # one run: the same model, dataset, methods and options in every cell
    classifier = window.classifier
    explainers = [e for e in map(create_from_spec, spec["methods"])
                  if getattr(shared_pass_of(e), "kind", None) == "ig-path"]
    cache = cache_module.DEFAULT_CACHE
    if not explainers:
        return
    run = options_from(RunOptions, window.options)
    if run.contrast is not None:  # contrastive paths are keyed by their contrast class: each cell computes its own
        return
    encodings, classes = [], []
    for cell in window.specs:
        example, encoding = window.example(cell["index"]), window.encoding(cell["index"])
        if is_document(encoding):  # windows are explained one by one in the cell
            continue
        chosen = targets.explain_target(run.target, example.label)
        if cache is not None and all(cached_any_target(e, classifier, encoding, chosen, cache) is not None
                                     for e in explainers):
            continue
        encodings.append(encoding)  # the class ``explain`` will read for "predicted" (its logits are kept)
        classes.append(int(np.argmax(classifier.logits_of(encoding))) if chosen is None else chosen)
    prefill_ig_paths(classifier, encodings, classes, explainers)


def _seconds(explanation) -> float:
    """The explanation's seconds, with its share of a batch the run's hook computed for several inputs."""
    batch = explanation.provenance["details"].get("path_computed_in_batch")
    share = batch["seconds"] / batch["inputs"] if batch else 0.0
    return round(explanation.provenance["seconds"] + share, 4)


def _mean_or_nan(values) -> float:
    """Mean of the finite values; NaN (not a warning) when a metric is undefined for every draw."""
    finite = np.asarray(values, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return float(finite.mean()) if finite.size else float("nan")


def start_evaluation(model: str, dataset: str, methods: list[str], evaluators: list[str], limit: int | None = None,
                     options: dict | None = None, store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells without running them."""
    store = store or ResultStore()
    evaluators = resolve_evaluators(evaluators)
    # parsed once per option group for the whole run: every cell, window hook and evaluator reads these instances
    options = frozen_options({"random_orderings": DEFAULT_RANDOM_ORDERINGS, **(options or {})})
    groups: list[type] = [RunOptions, *(g for e in evaluators if (g := EVALUATORS[e].options) is not None)]
    for group in groups:
        options_from(group, options)  # a bad setting fails here, before any work
    classifier = cached_classifier(model)
    examples = load_dataset(dataset, limit=limit, label_names=classifier.labels)
    paper_targets.check_gold_labels(evaluators, options.get("target"), [e.label for e in examples], dataset)
    run_id, _ = create_dataset_run(store, KIND, ", ".join(evaluators), model, classifier.fingerprint, dataset, examples,
                                   {"methods": methods, "evaluators": evaluators, "options": options or {}})
    cells = [Cell(key=example.id, spec={"model": model, "dataset": dataset, "index": index, "methods": methods,
                                        "evaluators": evaluators, "options": options or {}})
             for index, example in enumerate(examples)]
    return store, run_id, cells


def run_evaluation(model: str, dataset: str, methods: list[str], evaluators: list[str], limit: int | None = None,
                   options: dict | None = None, store: ResultStore | None = None, executor: str = "local",
                   progress: Progress | None = None, should_stop=None,
                   workers: int | None = None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_evaluation(model, dataset, methods, evaluators, limit, options, store)
    summary = run_cells(store, run_id, cells, evaluate_example, executor=executor, progress=progress,
                        should_stop=should_stop, batch_hook=batched_gradient_passes, workers=workers)
    return store, summary
