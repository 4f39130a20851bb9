"""Attacks over a dataset: one job cell per example (every chosen method), in the result store, with bootstrap CIs.

Paper 003 section 4.1 attacked 16 datapoints per model x dataset x method and dropped inputs too short for
k = 15 % of the length to be at least 1 ("four cases" on SST); those are counted here as skipped, with the reason.
"""
from __future__ import annotations

from dataclasses import asdict

import pandas as pd

from corpora import load_dataset
from models import ModelError, cached_classifier

from evaluation.adversarial.attack import ATTACKED_METHODS, AttackConfig, AttackError, attack, config_for
from evaluation.runs.jobs import Cell, Progress, RunSummary, run_cells
from evaluation.runs.runner import cell_rows_frame
from evaluation.runs.store import ResultStore
from evaluation.statistics import bootstrap_ci

KIND = "adversarial"
MEASURES = ("rank_change", "top_k_sum_change", "probability_change", "class_kept")


def attack_cell(spec: dict) -> dict:
    """Every method's attack on one example (depends only on ``spec``)."""
    classifier = cached_classifier(spec["model"])
    example = load_dataset(spec["dataset"], limit=spec["index"] + 1, label_names=classifier.labels)[spec["index"]]
    encoding = classifier.encode(example.text, example.pair)
    config = config_for(None, **spec["config"])
    rows, skipped, attacked = [], {}, {}
    for method in spec["methods"]:
        try:
            result = attack(classifier, encoding, method, config)
        except AttackError as error:
            skipped[method] = str(error)
            continue
        rows += [{"method": method, "metric": name, "value": value} for name, value in result.measures().items()]
        rows.append({"method": method, "metric": "steps_taken", "value": float(result.steps_taken)})
        attacked[method] = {"replaced_words": result.replaced_words, "k": result.k,
                            "original_top": [result.tokens[result.positions[i]] for i in
                                             result.original_shares.argsort()[::-1][:result.k]],
                            "attacked_top": [result.tokens[result.positions[i]] for i in
                                             result.attacked_shares.argsort()[::-1][:result.k]]}
    return {"example_id": example.id, "words": encoding.n_words, "rows": rows, "skipped": skipped,
            "attacked": attacked}


def start_attacks(model: str, dataset: str, methods: list[str], limit: int | None = 16,
                  config: AttackConfig | None = None, store: ResultStore | None = None
                  ) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the run and its cells."""
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
    run_config = {"model": model, "model_fingerprint": classifier.fingerprint, "dataset": dataset,
                  "limit": len(examples), **settings}
    title = f"adversarial ({config.objective}) on {dataset} ({len(examples)} examples), {model}"
    run_id = store.create_run(KIND, run_config, total=len(examples), title=title)
    cells = [Cell(key=example.id, spec={"model": model, "dataset": dataset, "index": index, **settings})
             for index, example in enumerate(examples)]
    return store, run_id, cells


def run_attacks(model: str, dataset: str, methods: list[str], limit: int | None = 16,
                config: AttackConfig | None = None, store: ResultStore | None = None, executor: str = "local",
                progress: Progress | None = None, should_stop=None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_attacks(model, dataset, methods, limit, config, store)
    summary = run_cells(store, run_id, cells, attack_cell, executor=executor, progress=progress,
                        should_stop=should_stop)
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
