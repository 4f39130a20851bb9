"""Dataset-level evaluation: any evaluators (metric groups) x any methods over N examples of a dataset.

One job cell per example computes every method's explanation (through the explanation cache, so a page's or an
earlier run's explanations are reused; methods that share a pass compute it once, ``explainers/shared_passes.py``)
and every chosen evaluator on it; per-example values land in the result store as each example finishes, so a run
resumes after a stop and a finished run reopens instantly. ``summarize`` gives method x metric means with
bootstrap 95 % confidence intervals.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import asdict

import numpy as np
import pandas as pd

from corpora import load_dataset
from evaluation import targets
from evaluation.faithfulness import naopc
from evaluation.faithfulness.curves import RemovalOptions, base_logits
from evaluation.faithfulness.random_band import band, compare_with_random
from evaluation.metric import EVALUATORS, METRICS, RANDOM_METHOD, RunOptions
from evaluation.runs.header import create_dataset_run
from evaluation.runs.jobs import Cell, CellStopped, Progress, RunSummary, current_stop_check, run_cells
from evaluation.runs.store import ResultStore
from evaluation.statistics import bootstrap_ci
from evaluation.suite import paper_targets
from evaluation.suite.registry import evaluate_batch, resolve_evaluators
from explainers import cache as cache_module
from explainers import create_from_spec
from explainers.params import options_from
from explainers.shared_passes import cached_any_target, explain_all, prefill_ig_paths, shared_pass_of, sharing
from models import cached_classifier
from models.documents import read_input
from models.metering import WorkStopped, metered
from models.windows import is_document

KIND = "evaluation"
DEFAULT_RANDOM_ORDERINGS = RunOptions.random_orderings


def evaluate_example(spec: dict) -> dict:
    """The work of one cell: every method and evaluator on one example (depends only on ``spec``).

    Stores per method the values and the curves behind them and, unless ``options['random_orderings']`` is 0,
    the random baseline's values over that many seeded draws. The evaluators' batch hooks do the work
    (``evaluation.suite.registry.evaluate_batch``): e.g. every removal metric of every method and of the random
    orderings is scored together, one engine call per removal operator.

    The cell runs in its own ``sharing()`` block (joining its window's, under the local and processes executors'
    batch hook), so its removal curves reuse leave-one-out's rows whatever the executor: a Ray task, outside any
    block, computed those rows again in other batches and gave values a float32 rounding apart.
    """
    with sharing():
        return _evaluate_example(spec)


def _evaluate_example(spec: dict) -> dict:
    classifier = cached_classifier(spec["model"])
    example = load_dataset(spec["dataset"], limit=spec["index"] + 1, label_names=classifier.labels)[spec["index"]]
    options = spec.get("options", {})
    encoding = read_input(classifier, example.text, example.pair, options)  # long documents in windows, never cut
    run = options_from(RunOptions, options)
    target = targets.explain_target(run.target, example.label)
    applicable = [e for e in spec["evaluators"] if EVALUATORS[e].applies_to(example)]
    explained, explanations = {}, {}
    # served from the cache where any page or earlier run left them; the rest share their passes
    computed = explain_all([create_from_spec(m, contrast=run.contrast) for m in spec["methods"]], classifier, encoding,
                           target)
    for method_spec, explanation in zip(spec["methods"], computed):
        explained[method_spec] = explanation
        explanations[method_spec] = {"words": list(explanation.words),
                                     "scores": [float(x) for x in explanation.word_scores],
                                     "target": explanation.target, "seconds": _seconds(explanation)}
    n_random = run.random_orderings if explained else 0
    batch = evaluate_batch(applicable, classifier, encoding, example, explained, options, n_random)
    rows, curves = [], {}
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
    for several inputs per batch (``prefill_ig_paths``) and served to the cells from one ``sharing()`` block.
    Inputs whose explanation is already cached are left out. A failure here only loses the speed-up: each cell
    then computes its own path (and records its own error)."""
    with sharing() as memo:
        if memo is not None:
            try:
                _prefill(specs)
            except WorkStopped as stop:
                raise CellStopped() from stop
            except Exception:  # noqa: BLE001 (the cells meet the same error and record it)
                pass
        try:
            _prefill_naopc_bounds(specs)
        except WorkStopped as stop:
            raise CellStopped() from stop
        except Exception:  # noqa: BLE001 (only the speed-up is lost: each cell searches its own bounds)
            pass
        yield


def _prefill(specs: list[dict]) -> None:
    spec = specs[0]  # one run: the same model, dataset, methods and options in every cell
    classifier = cached_classifier(spec["model"])
    explainers = [e for e in map(create_from_spec, spec["methods"])
                  if getattr(shared_pass_of(e), "kind", None) == "ig-path"]
    cache = cache_module.DEFAULT_CACHE
    if not explainers:
        return
    run = options_from(RunOptions, spec.get("options", {}))
    if run.contrast is not None:  # contrastive paths are keyed by their contrast class: each cell computes its own
        return
    examples = load_dataset(spec["dataset"], limit=max(s["index"] for s in specs) + 1, label_names=classifier.labels)
    encodings, classes = [], []
    with metered(current_stop_check()):
        for cell in specs:
            example = examples[cell["index"]]
            encoding = read_input(classifier, example.text, example.pair, spec.get("options", {}))
            if is_document(encoding):  # windows are explained one by one in the cell
                continue
            chosen = targets.explain_target(run.target, example.label)
            if cache is not None and all(cached_any_target(e, classifier, encoding, chosen, cache) is not None
                                         for e in explainers):
                continue
            encodings.append(encoding)  # the class ``explain`` will read for "predicted" (its logits are kept)
            classes.append(int(np.argmax(classifier.logits_of(encoding))) if chosen is None else chosen)
        prefill_ig_paths(classifier, encodings, classes, explainers)


def _prefill_naopc_bounds(specs: list[dict]) -> None:
    """NAOPC's bounds of the window's inputs searched in lockstep (one engine call per beam step for all
    inputs, not one per input and step), left in the memo the cells' ``aopc_bounds`` reads."""
    spec = specs[0]
    presets = [naopc.BY_ID[e] for e in spec["evaluators"] if e in naopc.BY_ID]
    if not presets:
        return
    classifier = cached_classifier(spec["model"])
    examples = load_dataset(spec["dataset"], limit=max(s["index"] for s in specs) + 1, label_names=classifier.labels)
    with metered(current_stop_check()):
        for preset in presets:
            options = preset.options(spec.get("options", {}))
            removal = RemovalOptions.from_dict(options)
            chosen = [examples[s["index"]] for s in specs if EVALUATORS[preset.id].applies_to(examples[s["index"]])]
            encodings = [read_input(classifier, example.text, example.pair, spec.get("options", {}))
                         for example in chosen]
            chosen = [e for e, encoding in zip(chosen, encodings) if not is_document(encoding)]
            encodings = [encoding for encoding in encodings if not is_document(encoding)]
            classes = [targets.resolve(removal.target, base_logits(classifier, encoding), example.label)
                       for encoding, example in zip(encodings, chosen)]  # the class the cells' metric reads
            naopc.prefill_bounds(classifier, encodings, classes, removal, options_from(naopc.NaopcOptions, options),
                                 options)


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
    options = {"random_orderings": DEFAULT_RANDOM_ORDERINGS, **(options or {})}
    options_from(RunOptions, options)  # a bad setting fails here, before any work
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


def cell_rows_frame(store: ResultStore, run_id: str, columns: list[str]) -> pd.DataFrame:
    """The ``rows`` of every stored cell as one table (a column ``example_id`` names the cell); failed cells
    (no rows) are left out."""
    records = [{"example_id": key, **row} for key, cell in store.cells(run_id).items() for row in cell.get("rows", [])]
    return pd.DataFrame.from_records(records, columns=["example_id", *columns])


def results_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
    """One row per (example, method, metric) with the value and whether it is ill-conditioned (kept, left out of
    the means: ``summarize``)."""
    frame = cell_rows_frame(store, run_id, ["method", "metric", "value", "ill_conditioned"])
    frame["ill_conditioned"] = frame["ill_conditioned"].eq(True)
    return frame


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
