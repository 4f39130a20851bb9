#!/usr/bin/env python
"""ROAR benchmark: the small CPU study (4 measures x 3 ratios x 1 seed) with the default model, wall time per
retrain for each variant, and the Ray-vs-local overhead. Every figure comes with a baseline measured in the
same run (one batched forward pass over the same sentences).

    python bench/bench_roar.py            # measure every part, project the small study, run it end to end
    python bench/bench_roar.py --quick    # seconds: tiny sizes, no end-to-end study
    python bench/bench_roar.py --no-study --no-ray

Figures:
- importance seconds per example of each measure (cheap settings) on a sample of sentences;
- wall seconds of one retrain + evaluation for each variant (head, last-k, all) at the default sizes, and the
  same in units of the baseline forward pass over the training + test sentences;
- the projected and (without --no-study) the measured wall time of the small study, against the 30-minute target;
- the same cells on the local executor and on a local Ray instance (fresh caches): the Ray overhead.
Each part runs in a fresh cache folder (the prepared models are linked in), so nothing is reused.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import settings  # noqa: E402

settings.prepare_runtime()


def fresh_cache(label: str) -> Path:
    """A new cache folder with the prepared models linked in; the explanation disk cache follows it."""
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    real = models_dir()
    folder = Path(tempfile.mkdtemp(prefix=f"bench-roar-{label}-"))
    (folder / "models").symlink_to(real, target_is_directory=True)
    os.environ["EXWB_CACHE_DIR"] = str(folder)
    DEFAULT_CACHE.directory = folder / "explanations"
    DEFAULT_CACHE.clear()
    from evaluation.roar import steps

    steps._IMPORTANCE.clear()
    return folder


def forward_baseline(classifier, encodings) -> float:
    classifier.predict_logits(encodings[:8])
    started = time.perf_counter()
    classifier.predict_logits(encodings)
    return time.perf_counter() - started


def measure_importance(config, data, per_measure: int) -> dict:
    from evaluation.roar.measures import Measure, importance_scores

    out = {}
    encodings, ids = data.encodings["train"][:per_measure], data.ids["train"][:per_measure]
    for spec in config.measures:
        measure = Measure.from_dict(spec)
        started = time.perf_counter()
        importance_scores(measure, data.classifier, encodings, ids, [None] * len(encodings), seed=0, cache=None)
        out[measure.id] = (time.perf_counter() - started) / len(encodings)
    return out


def measure_variants(config, data, variants: list[str], epochs: float) -> dict:
    from dataclasses import replace

    from evaluation.roar.masking import masked_batch
    from evaluation.roar.training import retrain_and_evaluate

    out = {}
    batches = {split: masked_batch(data.classifier, data.encodings[split],
                                   [e & False for e in data.eligible[split]], "mask") for split in ("train", "test")}
    for trainable in variants:
        variant = replace(config.variant, trainable=trainable, epochs=epochs)
        started = time.perf_counter()
        _, metrics = retrain_and_evaluate(data.classifier, batches["train"], data.labels["train"], batches["test"],
                                          data.labels["test"], variant, seed=0)
        out[trainable] = {"seconds": time.perf_counter() - started, "accuracy_0pct": metrics["accuracy"],
                          "label": variant.label()}
    return out


def run_cells_timed(config, executor: str) -> tuple[float, dict]:
    from evaluation.roar.study import prepare_study, roar_cell
    from evaluation.runs.jobs import run_cells
    from evaluation.runs.store import ResultStore

    store, run_id, cells = prepare_study(config, ResultStore(settings.cache_dir() / "results.sqlite"))
    started = time.perf_counter()
    summary = run_cells(store, run_id, cells, roar_cell, executor=executor)
    return time.perf_counter() - started, {"status": summary.status, "cells": len(cells), "errors": summary.errors,
                                           "results": {k: v.get("accuracy") for k, v in store.cells(run_id).items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="tiny sizes; seconds")
    parser.add_argument("--model", default="default")
    parser.add_argument("--no-study", action="store_true", help="skip the end-to-end small study")
    parser.add_argument("--no-ray", action="store_true", help="skip the Ray comparison")
    parser.add_argument("--train-size", type=int, default=None)
    parser.add_argument("--test-size", type=int, default=None)
    parser.add_argument("--sample", type=int, default=None, help="sentences per measure for the importance timing")
    parser.add_argument("--variants", default="head,last-k,all")
    args = parser.parse_args()

    from evaluation.roar.cost import retrain_count
    from evaluation.roar.data import study_data
    from evaluation.roar.study import build_config
    from evaluation.roar.training import Variant

    train_size = args.train_size or (40 if args.quick else 300)
    test_size = args.test_size or (20 if args.quick else 200)
    sample = args.sample or (5 if args.quick else 30)
    measures = ["ig", "lime", "loo", "attention"]
    results: dict = {"machine": {"cpus": os.cpu_count(), "threads": settings.torch_threads() or "default",
                                 "load_average": os.getloadavg()}, "quick": args.quick}

    fresh_cache("parts")
    config = build_config(model=args.model, dataset="sst2", measures=measures, ratios=[10, 20, 30], seeds=[0],
                          variant=Variant(trainable="head", train_size=train_size, test_size=test_size))
    data = study_data(config)
    everything = data.encodings["train"] + data.encodings["test"]
    baseline = forward_baseline(data.classifier, everything)
    results["baseline_forward_seconds"] = baseline
    print(f"baseline: one batched forward pass over {len(everything)} sentences: {baseline:.2f} s")

    importance = measure_importance(config, data, sample)
    results["importance_seconds_per_example"] = importance
    for name, seconds in importance.items():
        print(f"importance {name:10s} {seconds:.3f} s / sentence ({seconds * len(everything):.0f} s for the "
              f"{len(everything)} study sentences)")

    variants = measure_variants(config, data, [v for v in args.variants.split(",") if v], config.variant.epochs)
    results["retrain"] = variants
    for name, info in variants.items():
        print(f"retrain {name:7s} {info['seconds']:7.1f} s = {info['seconds'] / baseline:5.1f} x baseline "
              f"(0 % accuracy {info['accuracy_0pct']:.3f}; {info['label']})")

    retrains = retrain_count(config)["total"]
    default = Variant()
    head = variants.get("head", {"seconds": float("nan")})["seconds"]
    # the head variant costs one encoder pass per training and test sentence: scale to the default sizes
    scale = (default.train_size + default.test_size) / (train_size + test_size)
    sentences = default.train_size + default.test_size
    projected = retrains * head * scale + sum(s * sentences for s in importance.values())
    results["projected_small_study_seconds"] = projected
    print(f"projected small study at the defaults ({retrains} retrains, head variant, {default.train_size} / "
          f"{default.test_size} sentences): {retrains} x {head * scale:.0f} s retrain + "
          f"{sum(s * sentences for s in importance.values()):.0f} s importance = {projected / 60:.1f} min = "
          f"{projected / 1800:.2f} x the 30-minute target")

    if not args.no_study and not args.quick:
        fresh_cache("study")
        seconds, info = run_cells_timed(config, "local")
        results["small_study_seconds"] = seconds
        print(f"small study end to end: {seconds / 60:.1f} min ({info['status']}) = {seconds / 1800:.2f} x the "
              f"30-minute target")

    if not args.no_ray:
        small = build_config(model=args.model, dataset="sst2", measures=["attention"], ratios=[20], seeds=[0],
                             variant=Variant(trainable="head", train_size=min(train_size, 100),
                                             test_size=min(test_size, 50)))
        fresh_cache("local")
        local_seconds, local = run_cells_timed(small, "local")
        import ray

        from evaluation.runs import ray_executor

        fresh_cache("ray")
        started = time.perf_counter()
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
        init_seconds = time.perf_counter() - started
        try:
            ray_seconds, on_ray = run_cells_timed(small, "ray")
        finally:
            ray_executor.shutdown()
        same = local["results"] == on_ray["results"]
        results["ray"] = {"local_seconds": local_seconds, "ray_seconds": ray_seconds, "ray_init_seconds": init_seconds,
                          "cells": local["cells"], "same_numbers": same}
        print(f"{local['cells']} cells: local {local_seconds:.1f} s, Ray (1 worker) {ray_seconds:.1f} s + "
              f"{init_seconds:.1f} s to start Ray: overhead {ray_seconds - local_seconds:+.1f} s "
              f"({ray_seconds / local_seconds:.2f} x); same numbers: {same}")
    print(json.dumps(results, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
