#!/usr/bin/env python
"""Partition SHAP's batches: this tree's ``owen_values`` against the one of another git revision
(default ``main``), in the same process, interleaved A B A B, best of ``--rounds``, at ferret's settings
(500 evaluations, queue batch 5, [MASK], probability) on SST-2 dev sentences of 15-30 words.

Per sentence and variant: model batches and forward rows (exact, load-free), the budget count shap reports,
CPU and wall seconds, and the largest difference of the word values between the two (float32 batch
composition: both visit the same nodes). ``--ahead`` lists look-ahead sizes to compare in this tree.

    python bench/bench_partition_shap.py                       # 8 sentences, against main
    python bench/bench_partition_shap.py --against HEAD~1 --ahead 0,16,64,128
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import settings  # noqa: E402

settings.prepare_runtime()

import numpy as np  # noqa: E402

from bench.bench_methods import sentences  # noqa: E402
from explainers.mask_forward import MaskForward  # noqa: E402
from explainers.methods import partition_shap  # noqa: E402
from models import load_classifier  # noqa: E402
from models.metering import metered  # noqa: E402

MAX_EVALS, QUEUE_BATCH = 500, 5


def module_at(revision: str) -> types.ModuleType:
    """partition_shap.py of another revision, without its explainer class (its id is registered already)."""
    source = subprocess.run(["git", "show", f"{revision}:explainers/methods/partition_shap.py"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout
    module = types.ModuleType(f"partition_shap_{revision}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source.split("\n@register")[0], module.__name__, "exec"), module.__dict__)
    return module


def run(owen_values, classifier, encoding, target: int, **options) -> dict:
    names, is_word = partition_shap.tree_leaves(encoding)
    tree = partition_shap.partition_tree(names)
    forward = MaskForward(classifier, encoding, "mask", target, "probability")
    wall, cpu = time.perf_counter(), time.process_time()
    with metered() as meter:
        values, evals = owen_values(lambda keep: forward.scores(keep[:, is_word]), tree, len(names), MAX_EVALS,
                                    QUEUE_BATCH, 0, **options)
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu, "batches": meter.batches,
            "rows": meter.forward_passes, "evals": evals, "values": values[is_word],
            "whole_tree": partition_shap.full_expansion_evals(tree, len(names)) <= MAX_EVALS - 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--against", default="main", help="git revision of the baseline")
    parser.add_argument("--ahead", default=str(partition_shap.AHEAD_ROWS), help="look-ahead rows, comma-separated")
    args = parser.parse_args()
    classifier = load_classifier(args.model)
    baseline = module_at(args.against)
    variants = {args.against: lambda *a: run(baseline.owen_values, *a)}
    for rows in (int(r) for r in args.ahead.split(",")):
        variants[f"ahead {rows}"] = lambda *a, rows=rows: run(partition_shap.owen_values, *a, ahead_rows=rows)
    texts = sentences(args.count, (15, 30))
    classifier.predict_logits([classifier.encode(texts[0])] * 4)  # first-call costs out of the figures
    with open("/proc/loadavg") as handle:
        load_before = handle.read().split()[0]
    totals = {name: {"wall": 0.0, "cpu": 0.0, "batches": 0, "rows": 0} for name in variants}
    print(f"{'words':>5s} {'variant':>12s} {'evals':>6s} {'batches':>8s} {'rows':>6s} {'CPU s':>7s} {'wall s':>7s}"
          f" {'max |dv|':>9s}")
    for text in texts:
        encoding = classifier.encode(text)
        target = int(np.argmax(classifier.logits_of(encoding)))
        best = {}
        for _ in range(args.rounds):  # A B A B: each variant sees the same load
            for name, variant in variants.items():
                result = variant(classifier, encoding, target)
                kept = best.get(name)
                best[name] = result if kept is None else {**result, "wall": min(kept["wall"], result["wall"]),
                                                          "cpu": min(kept["cpu"], result["cpu"])}
        reference = best[args.against]["values"]
        for name, result in best.items():
            for key in totals[name]:
                totals[name][key] += result[key]
            print(f"{encoding.n_words:5d} {name:>12s} {result['evals']:6d} {result['batches']:8d} {result['rows']:6d}"
                  f" {result['cpu']:7.2f} {result['wall']:7.2f} {np.abs(result['values'] - reference).max():9.1e}"
                  + ("  (whole tree)" if result["whole_tree"] and name == args.against else ""))
    with open("/proc/loadavg") as handle:
        load_after = handle.read().split()[0]
    print(f"\n{len(texts)} sentences, best of {args.rounds} (A B interleaved), load average {load_before} -> "
          f"{load_after}")
    base = totals[args.against]
    for name, total in totals.items():
        print(f"{name:>12s}: {total['batches']:4d} batches, {total['rows']:5d} rows, {total['cpu']:6.2f} CPU s "
              f"({total['cpu'] / base['cpu']:.2f}x), {total['wall']:6.2f} wall s ({total['wall'] / base['wall']:.2f}x)")


if __name__ == "__main__":
    main()
