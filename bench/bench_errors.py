#!/usr/bin/env python
"""Benchmark of the error-analysis workflow: the predictions table against one batched forward pass, the
table's reopening time, and a slice summary against the explanations' own cost.

- predictions: ``predict_dataset`` over the SST-2 dev sentences (encode, length-sorted chunks, each stored in a fresh
  result store) against the baseline measured in the same run: the texts tokenized in one call and classified by
  one ``predict_proba`` (target: within 1.2x);
- reopening: the same call once the table is stored (no forward pass; the page reopens through it; target < 0.5 s);
- slice summary: ``summarize_slice`` with leave-one-out over N errors and N correct examples (explanation cache
  empty) against the sum of the explanations' own seconds from their provenance (target: within 1.2x).

    python bench/bench_errors.py            # all 872 sentences, 100 + 100 explained
    python bench/bench_errors.py --quick    # 200 sentences, 10 + 10 explained
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

from corpora import load_dataset  # noqa: E402
from evaluation.errors import Filters, apply_filters, correct_rows, predict_dataset, summarize_slice  # noqa: E402
from evaluation.runs.store import ResultStore  # noqa: E402
from explainers import create_from_spec  # noqa: E402
from explainers.cache import DEFAULT_CACHE, cached_only  # noqa: E402
from models import load_classifier, metered  # noqa: E402


def best_of(repeats: int, work) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        work()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="200 sentences, 10 + 10 explained")
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    classifier = load_classifier(args.model)
    examples = load_dataset("sst2:dev", limit=200 if args.quick else None, label_names=classifier.labels)
    texts = [e.text for e in examples]
    repeats = 2
    classifier.predict_proba(classifier.tokenize_texts(texts[:16]))  # warm-up
    baseline = best_of(repeats, lambda: classifier.predict_proba(classifier.tokenize_texts(texts)))

    with tempfile.TemporaryDirectory() as folder:
        stores = iter(ResultStore(Path(folder) / f"results-{i}.sqlite") for i in range(repeats + 1))
        predicting = best_of(repeats, lambda: predict_dataset(classifier, examples, "sst2:dev", store=next(stores)))
        store = next(stores)
        table = predict_dataset(classifier, examples, "sst2:dev", store=store)
        with metered() as meter:
            reopening = best_of(3, lambda: predict_dataset(classifier, examples, "sst2:dev", store=store))
    n = 10 if args.quick else 100
    errors = apply_filters(table.frame, Filters(misclassified=True)).head(n)
    correct = correct_rows(table.frame, [], len(errors))
    DEFAULT_CACHE.clear()
    started = time.perf_counter()
    summarize_slice(classifier, [examples[i] for i in errors["index"]], [examples[i] for i in correct["index"]],
                    "leave_one_out")
    slice_seconds = time.perf_counter() - started
    own = 0.0  # the explanations' own seconds, from their provenance (now in the cache)
    explainer = create_from_spec("leave_one_out")
    for index in list(errors["index"]) + list(correct["index"]):
        example = examples[index]
        own += cached_only(explainer, classifier, classifier.encode(example.text, example.pair)).provenance["seconds"]
    summary = {"model": classifier.name, "sentences": len(examples), "threads": settings.torch_threads(),
               "baseline_seconds": baseline, "predictions_seconds": predicting,
               "ratio_predictions_over_baseline": predicting / baseline, "reopen_seconds": reopening,
               "reopen_forward_passes": meter.forward_passes, "accuracy": table.accuracy,
               "slice_examples": len(errors) + len(correct), "slice_seconds": slice_seconds,
               "explanations_own_seconds": own, "ratio_slice_over_explanations": slice_seconds / own}
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"model {classifier.name}, {len(examples)} SST-2 dev sentences, torch threads {summary['threads']}, "
          f"best of {repeats}")
    print(f"one batched forward (tokenize + predict_proba): {baseline:.2f} s")
    print(f"predictions table (encode, chunks, store):       {predicting:.2f} s "
          f"({summary['ratio_predictions_over_baseline']:.2f}x; target <= 1.2x)")
    print(f"reopening the stored table:                      {reopening * 1000:.0f} ms "
          f"({meter.forward_passes} forward passes; target < 0.5 s)")
    print(f"slice summary (LOO, {summary['slice_examples']} examples):               {slice_seconds:.2f} s against "
          f"{own:.2f} s of explanations ({summary['ratio_slice_over_explanations']:.2f}x; target <= 1.2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
