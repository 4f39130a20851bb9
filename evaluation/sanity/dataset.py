"""Dataset-level sanity checks: the per-stage similarity curves and the randomized model's accuracy over N examples.

One job cell per example (``evaluation.runs.jobs``): every stage x method for that example; the randomized models
are built once per process (``models.randomize.family``) and reused by every cell. Results land in the result
store as each example finishes (resume after a stop; reopen a finished run instantly). ``summarize`` gives the
mean per stage and method with a percentile-bootstrap 95 % CI (paper 003 §3.3 and §4.1: 50 examples; seaborn
bootstrap in its code).

Two checks, as on the page:
- ``layers``: cascading or independent layer randomization (paper 003);
- ``head``: paper 000's classifier-head randomization under several seeds (Table A5).

Extra measures of a layers run (``measures``), stored as rows of their own metric beside the curves:
- ``emprt``: eMPRT per method at the last stage (cascading; ``emprt.py``), its random band: maps turned to noise;
- ``smprt``: the per-stage Spearman of |denoised maps| (``smprt.py``; N noisy copies per stage and method);
- ``repeatability``: each method under K seeds on the original model (``repeatability.py``), stage "original".
Each extra measure has its random-baseline rows (method ``CHANCE``), as the curves do.
"""
from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from corpora import load_dataset
from evaluation import targets
from evaluation.runs.header import create_dataset_run
from evaluation.runs.jobs import Cell, Progress, RunSummary, run_cells
from evaluation.runs.store import ResultStore
from evaluation.sanity import emprt, repeatability, smprt
from evaluation.sanity.head_check import PAPER_000_SEEDS, run_head_check
from evaluation.sanity.one_input import (
    CHANCE,
    DEFAULT_TOP_FRACTION,
    MEASURES,
    SIMILARITY_MEASURES,
    chance_similarity,
    explainers_for,
    run_sanity,
)
from evaluation.sanity.trained_methods import for_randomized_copies
from evaluation.statistics import bootstrap_ci
from evaluation.summary import cell_rows_frame
from explainers import REGISTRY, split_spec
from explainers.cache import DEFAULT_CACHE
from models import ModelError, cached_classifier, randomize

KIND = "sanity"
CHECKS = {"layers": "layer randomization (paper 003)", "head": "classifier-head randomization (paper 000)"}
MODEL_ROW = "(model)"  # the rows that carry the randomized model's correctness per stage
EXTRA_MEASURES = {"emprt": "eMPRT (relative rise in complexity, cascading)",
                  "smprt": "sMPRT (denoised maps, Spearman of |scores| per stage, cascading)",
                  "repeatability": "repeatability across seeds (original model)"}
NEEDS_CASCADING = ("emprt", "smprt")


def sanity_cell(spec: dict) -> dict:
    """The work of one cell (depends only on ``spec``): every stage x method for one example."""
    classifier = cached_classifier(spec["model"])
    example = load_dataset(spec["dataset"], limit=spec["index"] + 1, label_names=classifier.labels)[spec["index"]]
    encoding = classifier.encode(example.text, example.pair)
    target = targets.explain_target(spec.get("target"), example.label)
    # a randomized copy is another model: AML runs with the original model's G (or fine-tunes it), and says so
    methods, notes = for_randomized_copies(explainers_for(spec["methods"]), classifier)
    top_fraction = spec.get("top_fraction", DEFAULT_TOP_FRACTION)
    # the store keeps the results; no disk churn. "original": only the original model's explanations go through
    # the cache (the report card shares them with its faithfulness run on the same examples)
    sharing = spec.get("cache", False)
    cache = DEFAULT_CACHE if sharing else None
    rows = []
    if spec["check"] == "head":
        result = run_head_check(classifier, encoding, methods, seeds=spec["seeds"], target=target,
                                cache=cache if sharing is True else None)
        for record in result.frame().to_dict("records"):
            rows += [{"stage": f"seed {record['seed']}", "stage_index": 1, "method": record["method"],
                      "metric": metric, "value": record[measure]} for measure, metric in MEASURES.items()]
        predictions = {f"seed {seed}": int(np.argmax(p)) for seed, p in result.probabilities.items() if seed >= 0}
        predictions["original"] = int(np.argmax(result.probabilities[-1]))
        errors = result.errors
        originals = result.original
    else:
        study = run_sanity(classifier, encoding, methods, mode=spec["mode"], init=spec["init"], seed=spec["seed"],
                           target=target, top_fraction=top_fraction, cache=cache, chance_draws=1,
                           only_stages=spec.get("only_stages"), cache_randomized=sharing is True)
        for record in study.frame().to_dict("records"):
            rows += [{"stage": record["stage"], "stage_index": record["stage_index"], "method": record["method"],
                      "metric": metric, "value": record[measure]} for measure, metric in MEASURES.items()]
        predictions = {s.name: int(np.argmax(s.probabilities)) for s in study.stages}
        errors = {f"{s.name} / {k}": v for s in study.stages for k, v in s.errors.items()}
        originals = study.stages[0].explanations
        extra_rows, extra_errors = extra_measure_rows(spec, classifier, encoding, methods, target, study,
                                                      cache if sharing is True else None)
        rows += extra_rows
        errors.update(extra_errors)
    # the random baseline: each original explanation against random permutations of itself (mean per example)
    rng = np.random.default_rng([int(spec["seed"]), int(spec["index"])])
    for measure in SIMILARITY_MEASURES:
        values = [np.nanmean(chance_similarity(e.word_scores, rng, 20, top_fraction)[measure])
                  for e in originals.values() if e.n_words >= 2]
        if values:
            rows.append({"stage": "any", "stage_index": -1, "method": CHANCE, "metric": MEASURES[measure],
                         "value": float(np.nanmean(values))})
    if example.label is not None:
        rows += [{"stage": stage, "stage_index": -1, "method": MODEL_ROW, "metric": "correct",
                  "value": float(predicted == example.label)} for stage, predicted in predictions.items()]
    return {"example_id": example.id, "label": example.label, "words": encoding.n_words, "rows": rows,
            "predictions": predictions, "errors": errors, "notes": notes}


def extra_measure_rows(spec: dict, classifier, encoding, methods: dict, target: int | None, result,
                       cache) -> tuple[list[dict], dict[str, str]]:
    """The rows of the extra measures chosen in ``spec["measures"]`` for one example, with their random bands."""
    measures, rows, errors = spec.get("measures", []), [], {}
    top_fraction = spec.get("top_fraction", DEFAULT_TOP_FRACTION)
    rng = np.random.default_rng([int(spec["seed"]), int(spec["index"]), 18])

    def chance_row(metric: str, values) -> None:
        values = np.asarray(values, dtype=np.float64)
        if np.isfinite(values).any():
            rows.append({"stage": "any", "stage_index": -1, "method": CHANCE, "metric": metric,
                         "value": float(np.nanmean(values))})

    if "emprt" in measures and result.complete:
        last = result.stages[-1]
        for method, value in emprt.emprt(result).items():
            rows.append({"stage": last.name, "stage_index": last.index, "method": method, "metric": emprt.METRIC.id,
                         "value": value})
        chance_row(emprt.METRIC.id, [np.nanmean(emprt.chance_rise(e.word_scores, rng, 20))
                                     for e in result.stages[0].explanations.values() if e.n_words >= 2])
    if "smprt" in measures:
        options = smprt.SmoothingOptions(**spec.get("smoothing", {}))
        smooth = smprt.run_smprt(classifier, encoding, methods, options, mode=spec["mode"], init=spec["init"],
                                 seed=spec["seed"], target=target, top_fraction=top_fraction, cache=cache,
                                 chance_draws=1)
        rows += [{"stage": record["stage"], "stage_index": record["stage_index"], "method": record["method"],
                  "metric": smprt.METRIC.id, "value": record[smprt.MEASURE]}
                 for record in smooth.frame().to_dict("records")]
        errors.update({f"sMPRT {s.name} / {k}": v for s in smooth.stages for k, v in s.errors.items()})
        chance_row(smprt.METRIC.id, [np.nanmean(chance_similarity(e.word_scores, rng, 20, top_fraction)[smprt.MEASURE])
                                     for e in smooth.stages[0].explanations.values() if e.n_words >= 2])
    if "repeatability" in measures:
        repeated = repeatability.run_repeatability(classifier, encoding, methods,
                                                   seeds=spec.get("repeat_seeds", repeatability.DEFAULT_SEEDS),
                                                   target=target, top_fraction=top_fraction, cache=cache,
                                                   chance_draws=20, chance_seed=int(spec["index"]))
        for record in repeated.frame().to_dict("records"):
            rows += [{"stage": randomize.ORIGINAL, "stage_index": 0, "method": record["method"], "metric": metric,
                      "value": record[measure]} for measure, metric in repeatability.MEASURES.items()]
        errors.update({f"repeatability {k}": v for k, v in repeated.errors.items()})
        for measure, metric in repeatability.MEASURES.items():
            chance_row(metric, [repeated.chance[measure]["mean"]])
    return rows, errors


def validate(model: str, methods: list[str], check: str, mode: str, init: str, measures=()) -> None:
    if check not in CHECKS:
        raise ModelError(f"Unknown check '{check}'. Choose from: {', '.join(CHECKS)}.")
    if check == "layers" and mode not in randomize.MODES:
        raise ModelError(f"Unknown mode '{mode}'. Choose from: {', '.join(randomize.MODES)}.")
    if check == "layers" and init not in randomize.INITS:
        raise ModelError(f"Unknown initialization '{init}'. Choose from: {', '.join(randomize.INITS)}.")
    if not methods:
        raise ModelError("Choose at least one method.")
    unknown_measures = [m for m in measures if m not in EXTRA_MEASURES]
    if unknown_measures:
        raise ModelError(f"Unknown measure(s) {', '.join(unknown_measures)}. Choose from: {', '.join(EXTRA_MEASURES)}.")
    if measures and check != "layers":
        raise ModelError("eMPRT, sMPRT and repeatability run with the layer check: use check 'layers'.")
    if any(m in NEEDS_CASCADING for m in measures) and mode != "cascading":
        raise ModelError("eMPRT and sMPRT compare with the fully randomized model: use mode 'cascading'.")
    unknown = [m for m in methods if split_spec(m)[0] not in REGISTRY]
    if unknown:
        raise ModelError(f"Unknown method(s) {', '.join(unknown)}. Known: {', '.join(REGISTRY)}.")
    explainers_for(methods)  # unknown presets fail here, before any work


def start_sanity(model: str, dataset: str, methods: list[str], limit: int | None = None, check: str = "layers",
                 mode: str = "cascading", init: str = "model", seed: int = 0, seeds=PAPER_000_SEEDS,
                 target: str = "predicted", top_fraction: float = DEFAULT_TOP_FRACTION,
                 store: ResultStore | None = None, only_stages: list[str] | None = None, measures=(),
                 smoothing: smprt.SmoothingOptions | None = None,
                 repeat_seeds=repeatability.DEFAULT_SEEDS,
                 share_original: bool = False) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells without running them (``only_stages``: explain at those
    randomization stages only, e.g. the report card's last one). ``measures``: extra measures of a layers run
    (``EXTRA_MEASURES``), with sMPRT's ``smoothing`` and the ``repeat_seeds`` of repeatability.
    ``share_original``: the original model's explanations go through the explanation cache (the same values; a
    faithfulness run on the same examples and methods then serves them), so not in the run's identity."""
    measures = [m for m in EXTRA_MEASURES if m in set(measures)]
    validate(model, methods, check, mode, init, measures)
    store = store or ResultStore()
    classifier = cached_classifier(model)
    examples = load_dataset(dataset, limit=limit, label_names=classifier.labels)
    if not examples:
        raise ModelError(f"Dataset '{dataset}' has no examples.")
    settings: dict[str, Any] = {"check": check, "methods": list(methods), "target": targets.parse(target),
                "top_fraction": top_fraction}
    if check == "layers":
        settings.update(mode=mode, init=init, seed=int(seed))
        if only_stages is not None:  # absent otherwise: the run ids of full studies stay as they were
            settings["only_stages"] = list(only_stages)
        if measures:  # only then in the config: runs started without measures keep their identity
            settings["measures"] = measures
        if "smprt" in measures:
            settings["smoothing"] = asdict(smoothing or smprt.SmoothingOptions())
        if "repeatability" in measures:
            seeds_ = [int(s) for s in repeat_seeds]
            if len(seeds_) < 2 or len(set(seeds_)) != len(seeds_):
                raise ModelError("Repeatability needs at least two different seeds.")
            settings["repeat_seeds"] = seeds_
    else:
        settings.update(seeds=[int(s) for s in seeds], seed=int(seed), init="xavier")
    what = f"{mode} {init} seed {seed}" if check == "layers" else f"head seeds {settings['seeds']}"
    run_id, _ = create_dataset_run(store, KIND, f"sanity ({what})", model, classifier.fingerprint, dataset, examples,
                                   settings)
    sharing = {"cache": "original"} if share_original else {}
    cells = [Cell(key=example.id, spec={"model": model, "dataset": dataset, "index": index, **settings, **sharing})
             for index, example in enumerate(examples)]
    return store, run_id, cells


def run_sanity_study(model: str, dataset: str, methods: list[str], limit: int | None = None, check: str = "layers",
                     mode: str = "cascading", init: str = "model", seed: int = 0, seeds=PAPER_000_SEEDS,
                     target: str = "predicted", top_fraction: float = DEFAULT_TOP_FRACTION,
                     store: ResultStore | None = None, executor: str = "local", progress: Progress | None = None,
                     should_stop=None, measures=(), smoothing: smprt.SmoothingOptions | None = None,
                     repeat_seeds=repeatability.DEFAULT_SEEDS) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_sanity(model, dataset, methods, limit, check, mode, init, seed, seeds, target,
                                        top_fraction, store, measures=measures, smoothing=smoothing,
                                        repeat_seeds=repeat_seeds)
    summary = run_cells(store, run_id, cells, sanity_cell, executor=executor, progress=progress,
                        should_stop=should_stop)
    return store, summary


def results_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
    """One row per (example, stage, method, metric); failed examples are left out."""
    return cell_rows_frame(store, run_id, ["stage", "stage_index", "method", "metric", "value"])


def summarize(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Stage x method x metric: mean, percentile-bootstrap 95 % CI and n (NaNs dropped)."""
    rows = []
    for (stage, index, method, metric), group in frame.groupby(["stage", "stage_index", "method", "metric"],
                                                               sort=False):
        estimate = bootstrap_ci(group["value"].to_numpy(), seed=seed)
        rows.append({"stage": stage, "stage_index": index, "method": method, "metric": metric, **asdict(estimate)})
    out = pd.DataFrame(rows, columns=["stage", "stage_index", "method", "metric", "mean", "low", "high", "n",
                                      "ci_method"])
    return out


def curves(summary: pd.DataFrame, stage_names: list[str], metric: str = "sanity_spearman") -> pd.DataFrame:
    """The per-stage curve of one metric, stages in randomization order, plus the chance rows (one per stage)."""
    part = summary[(summary["metric"] == metric) & (summary["method"] != MODEL_ROW)].copy()
    chance = part[part["method"] == CHANCE]
    part = part[part["method"] != CHANCE]
    order = {name: i for i, name in enumerate(stage_names)}
    part = part[part["stage"].isin(order)]
    part["stage_index"] = part["stage"].map(order)
    if not chance.empty:
        row = chance.iloc[0].to_dict()
        part = pd.concat([part, pd.DataFrame([{**row, "stage": name, "stage_index": i}
                                              for i, name in enumerate(stage_names)])], ignore_index=True)
    return part.sort_values(["method", "stage_index"]).reset_index(drop=True)


def chance_band(curves: pd.DataFrame) -> tuple[dict | None, pd.DataFrame]:
    """Split ``curves`` (from ``curves``) into the random baseline's band, {"mean", "low", "high"} (None when the
    run has no random baseline), and the methods' rows. The chance rows repeat one band at every stage."""
    chance = curves[curves["method"] == CHANCE]
    methods = curves[curves["method"] != CHANCE]
    if chance.empty:
        return None, methods
    first = chance.iloc[0]
    return {"mean": float(first["mean"]), "low": float(first["low"]), "high": float(first["high"])}, methods


def measure_table(summary: pd.DataFrame, metric: str) -> tuple[dict | None, pd.DataFrame]:
    """One value per method of a single-stage measure (eMPRT: the last stage; repeatability: the original model),
    and its random band ({"mean", "low", "high"}, None when the run has none)."""
    part = summary[(summary["metric"] == metric) & (summary["method"] != MODEL_ROW)]
    chance = part[part["method"] == CHANCE]
    methods = part[part["method"] != CHANCE][["method", "stage", "mean", "low", "high", "n"]].reset_index(drop=True)
    band = None if chance.empty else {k: float(chance.iloc[0][k]) for k in ("mean", "low", "high")}
    return band, methods


def accuracy_by_stage(summary: pd.DataFrame, stage_names: list[str]) -> pd.DataFrame:
    """Accuracy of the (randomized) model per stage, with its bootstrap CI."""
    part = summary[(summary["method"] == MODEL_ROW) & (summary["metric"] == "correct")].copy()
    order = {name: i for i, name in enumerate(stage_names)}
    part = part[part["stage"].isin(order)]
    part["stage_index"] = part["stage"].map(order)
    return part.sort_values("stage_index").reset_index(drop=True)[["stage", "stage_index", "mean", "low", "high", "n"]]


def stage_names_for(run: dict) -> list[str]:
    """x-axis of a stored run: original, head, blocks, embeddings (layers) or original, seed s... (head)."""
    config = run["config"]
    if config["check"] == "head":
        return ["original"] + [f"seed {s}" for s in config["seeds"]]
    return randomize.stage_names(cached_classifier(config["model"]))


def chance_level(store: ResultStore, run_id: str) -> float | None:
    """Accuracy of always predicting the majority gold label among the run's examples."""
    labels = [label for cell in store.cells(run_id).values() if (label := cell.get("label")) is not None]
    if not labels:
        return None
    _, counts = np.unique(labels, return_counts=True)
    return float(counts.max() / counts.sum())


def head_table(frame: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Paper 000 Table A5 layout: per method, the sign-change share and mean |change| pooled over examples and
    head seeds: mean ± std (as the paper reports) and a bootstrap 95 % CI of the mean."""
    rows = []
    part = frame[frame["method"].ne(MODEL_ROW) & frame["method"].ne(CHANCE)]
    for method, group in part.groupby("method", sort=False):
        row = {"method": method}
        for metric, name in (("sanity_sign_change", "sign_change"), ("sanity_mean_abs_change", "mean_abs_change"),
                             ("sanity_spearman", "spearman")):
            values = group.loc[group["metric"] == metric, "value"].to_numpy(dtype=np.float64)
            values = values[np.isfinite(values)]
            estimate = bootstrap_ci(values, seed=seed)
            row.update({f"{name}_mean": estimate.mean, f"{name}_std": float(values.std(ddof=1)) if values.size > 1
                        else float("nan"), f"{name}_low": estimate.low, f"{name}_high": estimate.high})
        row["n"] = int(group["example_id"].nunique())
        rows.append(row)
    return pd.DataFrame(rows)
