"""Plausibility over a dataset: method x metric tables with bootstrap CIs, a random baseline, paper 000's sweep.

Plausibility is agreement with people, not faithfulness. A run (``evaluation/suite/plausibility_run.py``) is an
ordinary dataset evaluation of the shared runner (``evaluation/suite/runner.py``, kind ``evaluation``) with the ``plausibility`` and
``plausibility-sweep`` evaluators of ``evaluation/plausibility/metrics.py``, exactly what
``cli.py evaluate --metrics plausibility,plausibility-sweep`` runs, so the app and the command line share
results. Each cell is one example: every method's explanation (through the explanation cache), the
per-example metrics and the per-tau sweep, and the runner's **random baseline** (method
``random baseline``: uniformly random word scores over the same words, ``random_orderings`` seeded draws,
scored by the same evaluators; no model involved).

Paper 000's dataset protocol (seeds-000-001.md 000.3(e)) is computed here from the per-example sweep:
for every tau the IoU, precision and recall are averaged over examples, F1 is the harmonic mean of the
*averaged* precision and recall, and each method is reported at its own best tau (optimistic for every
method, as the paper says). Bootstrap CIs resample examples at that tau (tau chosen on all examples).

Paper 002's top-p % binarization (``binarization="top-p"``, ``evaluation/plausibility/top_p.py``) is fitted over
a run's documents, so it is computed here from the stored word scores: per method, every scored document's
scores and human mask (aligned as the evaluator aligns them) go to ``top_p_binarize``, and the token precision,
recall and F1 of each document's top-p words replace the top-k ones in the report. The random baseline gets the
same treatment: ``random_orderings`` seeded draws of uniform word scores over every document, each draw fitted
on its own.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from corpora import load_dataset
from evaluation.faithfulness.selection_bias import with_selection_columns
from evaluation.metric import METRICS, RANDOM_METHOD, RunOptions
from evaluation.plausibility.alignment import align
from evaluation.plausibility.metrics import TOP_K_TO_TOP_P, PlausibilityConfig, config_from_options, parse_sweep_id
from evaluation.plausibility.micro_f1 import micro_macro_table
from evaluation.plausibility.rationale_scores import TAUS, f1, iou_f1_of_means, set_scores
from evaluation.plausibility.top_p import top_p_binarize
from evaluation.runs.store import ResultStore
from evaluation.summary import random_orderings_frame, results_frame, summarize
from explainers.params import options_from
from models import cached_classifier
from models.documents import read_input

EVALUATORS = ["plausibility", "plausibility-sweep"]


def split_frame(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-example metrics, per-example sweep rows with ``quantity`` and ``tau`` columns)."""
    parsed = frame["metric"].map(parse_sweep_id)
    is_sweep = parsed.notna()
    sweep = frame[is_sweep].copy()
    sweep["quantity"] = [p[0] for p in parsed[is_sweep]]
    sweep["tau"] = [p[1] for p in parsed[is_sweep]]
    return frame[~is_sweep].copy(), sweep


def metric_table(frame: pd.DataFrame, orderings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Method x metric means with 95 % bootstrap CIs and the comparison with the random baseline
    (``evaluation.summary.summarize``), plus the metric labels."""
    metrics, _sweep = split_frame(frame)
    metrics = metrics[metrics["metric"].str.startswith("plaus_")]
    if metrics.empty:
        return pd.DataFrame(columns=["method", "metric", "label", "mean", "low", "high", "n", "ci_method",
                                     "higher_is_better"])
    if orderings is not None and len(orderings):
        orderings = orderings[orderings["metric"].str.startswith("plaus_")]
    table = summarize(metrics, orderings)
    table.insert(2, "label", [METRICS[m].label if m in METRICS else m for m in table["metric"]])
    table["family"] = "plausibility (agreement with people), not faithfulness"
    if "vs_random" in table:  # human coverage / words cut describe the data, not the method
        data_property = table["metric"].map(lambda m: bool(METRICS[m].params.get("data_property")) if m in METRICS
                                            else False)
        table.loc[data_property, "vs_random"] = "property of the data"
    return table


def wide_table(table: pd.DataFrame, decimals: int = 3) -> pd.DataFrame:
    """Methods as rows, metrics as columns, each cell 'mean [low, high]' (arrows give the direction)."""
    if table.empty:
        return pd.DataFrame()
    cells = table.assign(cell=[f"{m:.{decimals}f} [{lo:.{decimals}f}, {hi:.{decimals}f}]" if np.isfinite(m) else "n/a"
                               for m, lo, hi in zip(table["mean"], table["low"], table["high"])],
                         column=[f"{label} {METRICS[m].arrow}" if m in METRICS else label
                                 for m, label in zip(table["metric"], table["label"])])
    wide = cells.pivot(index="method", columns="column", values="cell")
    order = list(dict.fromkeys(cells["column"]))
    methods = [m for m in dict.fromkeys(cells["method"]) if m != RANDOM_METHOD]
    methods += [RANDOM_METHOD] if RANDOM_METHOD in set(cells["method"]) else []
    return wide.loc[methods, order]


def sweep_curves(frame: pd.DataFrame) -> pd.DataFrame:
    """Per method and tau: mean IoU, precision, recall, coverage over examples, and F1 of the averaged P and R."""
    _metrics, sweep = split_frame(frame)
    if sweep.empty:
        return pd.DataFrame(columns=["method", "tau", "iou", "precision", "recall", "coverage", "f1", "n"])
    means = sweep.pivot_table(index=["method", "tau"], columns="quantity", values="value", aggfunc="mean")
    counts = sweep[sweep["quantity"] == "iou"].groupby(["method", "tau"])["value"].count()
    curves = means.reset_index()
    curves["n"] = [int(counts.get((m, t), 0)) for m, t in zip(curves["method"], curves["tau"])]
    curves["f1"] = [f1(p, r) for p, r in zip(curves["precision"], curves["recall"])]  # paper 000: F1 of the averages
    curves.columns.name = None
    return curves[["method", "tau", "iou", "precision", "recall", "coverage", "f1", "n"]]


def paper000_table(frame: pd.DataFrame, select_by: str = "f1", resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Each method at its best tau: IoU, precision, recall, F1 (of the averages), coverage, with bootstrap CIs."""
    curves = sweep_curves(frame)
    _metrics, sweep = split_frame(frame)
    rows = []
    for method, group in curves.groupby("method", sort=False):
        best = group.sort_values([select_by, "tau"], ascending=[False, True]).iloc[0]
        tau = float(best["tau"])
        at_tau = sweep[(sweep["method"] == method) & np.isclose(sweep["tau"], tau)]
        per_example = at_tau.pivot_table(index="example_id", columns="quantity", values="value")
        values = {q: per_example[q].to_numpy() for q in ("iou", "precision", "recall", "coverage")}
        n = len(per_example)
        rng = np.random.default_rng(seed)
        draws = rng.integers(0, n, size=(resamples, n)) if n > 1 else np.zeros((1, max(n, 1)), dtype=int)
        boot = {q: v[draws].mean(axis=1) for q, v in values.items()} if n else {}
        if n:
            p_boot, r_boot = boot["precision"], boot["recall"]
            boot["f1"] = np.where(p_boot + r_boot > 0, 2 * p_boot * r_boot / np.where(p_boot + r_boot > 0,
                                                                                      p_boot + r_boot, 1), 0.0)
        row = {"method": method, "best_tau": tau, "selected_by": select_by, "n": n}
        for q in ("iou", "precision", "recall", "f1", "coverage"):
            row[q] = float(best[q])
            row[f"{q}_low"] = float(np.quantile(boot[q], 0.025)) if n else float("nan")
            row[f"{q}_high"] = float(np.quantile(boot[q], 0.975)) if n else float("nan")
        rows.append(row)
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    order = [m for m in table["method"] if m != RANDOM_METHOD] + [m for m in table["method"] if m == RANDOM_METHOD]
    return table.set_index("method").loc[order].reset_index()


ERASER_OFFICIAL = {"token_f1": "Token F1 (mean of per-example F1)",
                   "iou_f1": "IoU F1 (F1 of the mean span precision and recall)",
                   "auprc": "AUPRC (trapezoid area under the precision-recall curve)"}


def eraser_official_table(frame: pd.DataFrame, resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Each method's numbers as ERASER's official script (rationale_benchmark/metrics.py) reports them: token F1
    averaged per example, IoU F1 as the F1 of the averaged span precision and recall (each mean over the examples
    that have a highlighted / a human span), AUPRC as the trapezoid area; 95 % bootstrap CIs over examples."""
    metrics, _sweep = split_frame(frame)
    wanted = ["plaus_token_f1_topk", "plaus_iou_precision", "plaus_iou_recall", "plaus_auprc_trapezoid"]
    metrics = metrics[metrics["metric"].isin(wanted)]
    rows = []
    for method, group in metrics.groupby("method", sort=False):
        wide = group.pivot_table(index="example_id", columns="metric", values="value", dropna=False)
        wide = wide.reindex(columns=wanted)
        values = wide.to_numpy(dtype=np.float64)
        n = len(wide)

        def official(v):
            return [np.nanmean(v[:, 0]) if np.isfinite(v[:, 0]).any() else np.nan, iou_f1_of_means(v[:, 1], v[:, 2]),
                    np.nanmean(v[:, 3]) if np.isfinite(v[:, 3]).any() else np.nan]

        point = official(values)
        rng = np.random.default_rng(seed)
        boot = np.array([official(values[rng.integers(0, n, n)]) for _ in range(resamples if n > 1 else 0)])
        row = {"method": method, "n": n}
        for i, key in enumerate(ERASER_OFFICIAL):
            row[key] = float(point[i])
            column = boot[:, i] if len(boot) else np.array([])
            column = column[np.isfinite(column)]
            row[f"{key}_low"] = float(np.quantile(column, 0.025)) if column.size else float("nan")
            row[f"{key}_high"] = float(np.quantile(column, 0.975)) if column.size else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)


def per_example_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-example metric values, one row per (example, method), metrics as columns (for export)."""
    metrics, _sweep = split_frame(frame)
    if metrics.empty:
        return pd.DataFrame()
    wide = metrics.pivot_table(index=["example_id", "method"], columns="metric", values="value").reset_index()
    return with_selection_columns(wide, metric_column=None)  # AML's "tuned for" badge travels with its rows


# ----- paper 002's top-p binarization (fitted over the run's documents) ----------------------------------------------
def _run_config(store: ResultStore, run_id: str) -> dict:
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"No run '{run_id}'.")
    return run["config"]


def _documents(store: ResultStore, run_id: str, frame: pd.DataFrame, config: PlausibilityConfig) -> dict:
    """Per method: {example id: (aligned word scores, human mask)} of the examples the evaluator scored."""
    run_config = _run_config(store, run_id)
    classifier = cached_classifier(run_config["model"])
    examples = {e.id: e for e in load_dataset(run_config["dataset"], limit=run_config.get("limit"),
                                              label_names=classifier.labels)}
    scored = set(zip(frame["example_id"], frame["method"]))  # only_correct and missing rationales are left out
    documents: dict[str, dict] = {}
    for example_id, cell in store.cells(run_id).items():
        example = examples.get(example_id)
        if example is None or example.rationale is None or not cell.get("explanations"):
            continue
        encoding = read_input(classifier, example.text, example.pair, run_config.get("options"))  # as the run read it
        for method, explanation in cell["explanations"].items():
            if (example_id, method) in scored:
                aligned = align(encoding, explanation["scores"], example.rationale, config.truncation)
                documents.setdefault(method, {})[example_id] = (aligned.scores, aligned.human)
    return documents


def _top_p_values(scores: list, humans: list, sign: str) -> list[dict[str, float]]:
    """Token precision, recall and F1 of each document's top-p words (cut words are never highlighted)."""
    ranked = [np.nan_to_num(np.abs(s) if sign == "absolute" else s, nan=np.nanmin(s) if np.isfinite(s).any() else 0.0)
              for s in scores]
    result = top_p_binarize(ranked, humans)
    return [{TOP_K_TO_TOP_P[f"plaus_token_{q}_topk"]: values[q] for q in ("precision", "recall", "f1")}
            for values in (set_scores(selected & np.isfinite(s), h)
                           for selected, s, h in zip(result.selected, scores, humans))]


def top_p_frames(store: ResultStore, run_id: str, frame: pd.DataFrame, config: PlausibilityConfig, n_random: int,
                 seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The top-p token scores as result rows (example, method, metric, value) and the random baseline's draws
    (example, metric, ordering, value). A method with fewer than two scored documents gets none (the
    regression is leave-one-out)."""
    rows, draws = [], []
    methods = _documents(store, run_id, frame, config)
    for method, documents in methods.items():
        if len(documents) < 2:
            continue
        ids = list(documents)
        values = _top_p_values([documents[i][0] for i in ids], [documents[i][1] for i in ids], config.sign)
        rows += [{"example_id": i, "method": method, "metric": m, "value": v}
                 for i, per_doc in zip(ids, values) for m, v in per_doc.items()]
    documents = next((d for d in methods.values() if len(d) >= 2), {})  # the random draws cover the same words
    rng = np.random.default_rng(seed)
    ids = list(documents)
    random_values: dict = {}
    for ordering in range(n_random if ids else 0):
        scores = [rng.uniform(size=documents[i][0].size) for i in ids]
        for i, per_doc in zip(ids, _top_p_values(scores, [documents[i][1] for i in ids], config.sign)):
            for metric, value in per_doc.items():
                draws.append({"example_id": i, "metric": metric, "ordering": ordering, "value": value})
                random_values.setdefault((i, metric), []).append(value)
    rows += [{"example_id": i, "method": RANDOM_METHOD, "metric": m, "value": float(np.mean(v))}
             for (i, m), v in random_values.items()]
    return (pd.DataFrame.from_records(rows, columns=["example_id", "method", "metric", "value"]),
            pd.DataFrame.from_records(draws, columns=["example_id", "metric", "ordering", "value"]))


def binarized_frames(store: ResultStore, run_id: str, config: PlausibilityConfig,
                     run_options: RunOptions) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run's result rows and random draws under the config's binarization: top-k as stored, or top-p
    (paper 002) in place of the top-k token scores."""
    frame, orderings = results_frame(store, run_id), random_orderings_frame(store, run_id)
    if config.binarization != "top-p" or frame.empty:
        return frame, orderings
    scored = frame[(frame["method"] != RANDOM_METHOD) & frame["metric"].str.startswith("plaus_")]
    top_p, top_p_draws = top_p_frames(store, run_id, scored, config,
                                      run_options.random_orderings, run_options.seed)
    top_k = set(TOP_K_TO_TOP_P)
    return (pd.concat([frame[~frame["metric"].isin(top_k)], top_p], ignore_index=True),
            pd.concat([orderings[~orderings["metric"].isin(top_k)], top_p_draws], ignore_index=True))


def micro_macro_report(store: ResultStore, run_id: str) -> pd.DataFrame:
    """Paper 004 Table 3: each method's macro and micro token F1 at the run's top-k (``micro_f1.py``)."""
    config, _preset = config_from_options(_run_config(store, run_id).get("options") or {})
    frame = results_frame(store, run_id)
    scored = frame[(frame["method"] != RANDOM_METHOD) & frame["metric"].eq("plaus_token_f1_topk")]
    return micro_macro_table(_documents(store, run_id, scored, config), config) if len(scored) else pd.DataFrame()


def run_report(store: ResultStore, run_id: str) -> dict:
    """Everything the page shows about a run, as plain data (also the JSON export)."""
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"No run '{run_id}'.")
    options = run["config"].get("options") or {}
    config, preset = config_from_options(options)
    run_options = options_from(RunOptions, options)
    frame, orderings = binarized_frames(store, run_id, config, run_options)
    cells = store.cells(run_id)
    errors = {key: cell["error"] for key, cell in cells.items() if "error" in cell}
    empty = not len(frame)
    return {
        "family": "plausibility (agreement with people), not faithfulness",
        "run": run, "config": config.to_dict(), "preset": preset or "default",
        "random_baseline": f"'{RANDOM_METHOD}': uniform random word scores scored by the same evaluators, "
                           f"{run_options.random_orderings} seeded draws per example (seed {run_options.seed} + "
                           f"input hash)",
        # AML's "tuned for" badge (and the selection warning, never due here: AML is selected on faithfulness)
        "metrics": [] if empty else
        with_selection_columns(metric_table(frame, orderings)).to_dict(orient="records"),
        "paper000": [] if empty else with_selection_columns(paper000_table(frame, config.select_by),
                                                            metric_column=None).to_dict(orient="records"),
        "sweep": [] if empty else sweep_curves(frame).to_dict(orient="records"),
        # ERASER's script has its own conventions (top-k token F1), whatever the config's binarization
        "eraser_official": [] if empty else eraser_official_table(results_frame(store, run_id)).to_dict(orient="records"),
        "eraser_official_conventions": ERASER_OFFICIAL,
        # paper 004 Table 3: micro F1 (pooled token decisions) beside macro F1, the config's top-k (aml-top25: 25)
        "micro_macro": [] if empty else micro_macro_report(store, run_id).to_dict(orient="records"),
        "errors": errors, "taus": list(TAUS),
    }
