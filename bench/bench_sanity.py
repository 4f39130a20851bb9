#!/usr/bin/env python
"""Benchmark: live layer randomization, every stage x six cheap methods on a 20-word sentence.

Target: under 5 s on the 2-core CPU with the ``default`` model (cascading, cold caches), and no more
than two copies of the model's weights in memory. Prints the wall time, the ratio against a baseline measured
in the same run (explaining the original model once per stage, with no randomization at all), the time spent
building the randomized models, and memory: peak RSS and the number of parameter copies held (distinct
parameter storage of every stage's model / the model's size). A second baseline builds the cascade the naive way
(Quantus: a full deepcopy of the model per stage) to show what copy-on-write saves. CPU seconds (process time)
are printed next to wall seconds: on a shared, loaded machine they are the better guide to the idle-machine figure.

    python bench/bench_sanity.py            # default model, six methods, cascading and independent
    python bench/bench_sanity.py --quick    # default-quick model, three methods, cascading only (seconds)
"""
from __future__ import annotations

import argparse
import copy
import gc
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import torch  # noqa: E402

from evaluation.sanity.one_input import explainers_for, run_sanity  # noqa: E402
from explainers import is_known_spec  # noqa: E402
from models import load_classifier, randomize  # noqa: E402

SENTENCE = ("the film is a charming and often affecting journey , but its plot drags badly in the middle and the "
            "ending feels rushed")  # 22 whitespace words
SIX = ["saliency", "saliency:paper-003", "input_x_gradient", "attention", "attention:paper-003-average",
       "leave_one_out"]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def parameter_bytes(models) -> int:
    seen, total = set(), 0
    for model in models:
        for tensor in list(model.parameters()) + list(model.buffers()):
            key = (tensor.untyped_storage().data_ptr(), tensor.untyped_storage().nbytes())
            if key not in seen:
                seen.add(key)
                total += key[1]
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="default-quick, three methods, cascading only")
    parser.add_argument("--model", default=None)
    parser.add_argument("--repeats", type=int, default=2, help="timed repetitions (best is reported)")
    args = parser.parse_args()
    model_name = args.model or ("default-quick" if args.quick else "default")
    methods = [m for m in (SIX[:3] if args.quick else SIX) if is_known_spec(m)]
    classifier = load_classifier(model_name)
    encoding = classifier.encode(SENTENCE)
    stage_count = len(randomize.stages(classifier)) + 1
    print(f"model {model_name} ({classifier.describe()['parameters'] / 1e6:.1f} M parameters), {encoding.n_words} "
          f"words / {encoding.n_tokens} tokens, {stage_count} stages (original + {stage_count - 1}), "
          f"{len(methods)} methods: {', '.join(methods)}; torch threads {torch.get_num_threads()}")
    explainers = explainers_for(methods)
    for explainer in explainers.values():  # warm-up (lazy imports, first-call allocations)
        explainer.explain(classifier, encoding, 1)
    rss_loaded = rss_mb()
    model_bytes = parameter_bytes([classifier.model])

    # baseline: the same explanations on the original model, once per stage (no randomization)
    best_baseline, cpu_baseline = float("inf"), float("inf")
    for _ in range(args.repeats):
        started, cpu = time.perf_counter(), time.process_time()
        for _stage in range(stage_count):
            for explainer in explainers.values():
                explainer.explain(classifier, encoding, 1)
        best_baseline = min(best_baseline, time.perf_counter() - started)
        cpu_baseline = min(cpu_baseline, time.process_time() - cpu)

    modes = ["cascading"] if args.quick else ["cascading", "independent"]
    for mode in modes:
        best, build, cpu_best = float("inf"), float("inf"), float("inf")
        for repeat in range(args.repeats):
            randomize.clear_cache()
            gc.collect()
            started, cpu = time.perf_counter(), time.process_time()
            family = randomize.family(classifier, mode=mode, init="model", seed=repeat)
            build = min(build, time.perf_counter() - started)
            result = run_sanity(classifier, encoding, explainers, mode=mode, init="model", seed=repeat, cache=None)
            best = min(best, time.perf_counter() - started)
            cpu_best = min(cpu_best, time.process_time() - cpu)
        copies = parameter_bytes([classifier.model] + [m.model for _, m in family]) / model_bytes
        frame = result.frame()
        last = frame[frame["stage_index"] == frame["stage_index"].max()]
        print(f"\n{mode}: all stages x {len(methods)} methods {best:.2f} s wall, {cpu_best:.2f} s CPU (best of "
              f"{args.repeats}; target < 5 s wall) · building the randomized models {build:.2f} s · ratio vs. the "
              f"no-randomization baseline {best / best_baseline:.2f}x wall ({best_baseline:.2f} s), "
              f"{cpu_best / cpu_baseline:.2f}x CPU ({cpu_baseline:.2f} s)")
        per_method = {m: sum(s.explanations[m].provenance["seconds"] for s in result.stages if m in s.explanations)
                      for m in methods}
        print("  wall seconds per method over all stages: " + ", ".join(f"{m} {v:.2f}" for m, v in
                                                                          per_method.items()))
        print(f"  parameter copies held (original + every stage): {copies:.2f} · peak RSS {rss_mb():.0f} MB "
              f"(after loading: {rss_loaded:.0f} MB)")
        print("  Spearman at the last stage: " + ", ".join(f"{r.method} {r.spearman:+.2f}"
                                                            for r in last.itertuples()))

    if not args.quick:
        randomize.clear_cache()
        gc.collect()
        started = time.perf_counter()
        naive, previous = [], classifier.model
        for stage in randomize.stages(classifier):  # Quantus-style: deepcopy the whole model at every stage
            model = copy.deepcopy(previous)
            for path in stage.paths:
                randomize._reinitialize(model, path, "model", 0)
            naive.append(model)
            previous = model
        naive_seconds = time.perf_counter() - started
        print(f"\nnaive cascade (full deepcopy per stage, all kept): building {naive_seconds:.2f} s, parameter copies "
              f"{parameter_bytes([classifier.model] + naive) / model_bytes:.2f}")
        del naive, previous
    print(f"\npeak RSS of the process: {rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
