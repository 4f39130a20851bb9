#!/usr/bin/env python
"""Cost of the plausibility metrics per example, against one saliency explanation measured in the same run.

    python bench/bench_plausibility.py [--quick] [--examples N] [--model default-quick]

Per SST dev example with a tree-derived rationale: (a) every per-example metric, (b) paper 000's 19-tau
sweep, (c) the random baseline as the shared runner computes it (10 draws x both evaluators), and the
baseline: one saliency explanation of the same sentence on the model (no cache). Prints milliseconds per
example and the ratios to the saliency baseline.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import numpy as np  # noqa: E402

from corpora import load_dataset  # noqa: E402
from evaluation.plausibility.alignment import align  # noqa: E402
from evaluation.plausibility.metrics import PlausibilityConfig, example_metrics, sweep_metrics  # noqa: E402
from explainers import create  # noqa: E402
from models import load_classifier  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="20 examples (seconds)")
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("--model", default="default-quick")
    args = parser.parse_args()
    n = 20 if args.quick else args.examples
    examples = [e for e in load_dataset("sst-rationales:dev") if sum(e.rationale)][:n]
    classifier = load_classifier(args.model)
    config = PlausibilityConfig()
    saliency = create("saliency")
    encodings = [classifier.encode(e.text) for e in examples]
    saliency.explain(classifier, encodings[0])  # warm-up

    started = time.perf_counter()
    explanations = [saliency.explain(classifier, encoding) for encoding in encodings]
    t_saliency = (time.perf_counter() - started) / n

    aligned = [align(enc, ex.word_scores, e.rationale) for enc, ex, e in zip(encodings, explanations, examples)]
    started = time.perf_counter()
    for a in aligned:
        example_metrics(a.scores, a.human, config, a.segments)
    t_metrics = (time.perf_counter() - started) / n
    started = time.perf_counter()
    for a in aligned:
        sweep_metrics(a.scores, a.human, config)
    t_sweep = (time.perf_counter() - started) / n
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    for a in aligned:
        for _ in range(10):
            scores = rng.random(a.human.size)
            example_metrics(scores, a.human, config, a.segments)
            sweep_metrics(scores, a.human, config)
    t_random = (time.perf_counter() - started) / n

    print(f"plausibility bench: {n} SST dev sentences, model {args.model}, {settings.torch_threads() or 'default'} "
          f"torch threads")
    print(f"  baseline: one saliency explanation      {1000 * t_saliency:8.2f} ms/example")
    for name, seconds in (("per-example metrics (15)", t_metrics), ("paper 000 sweep (19 taus)", t_sweep),
                          ("random baseline (10 draws, both)", t_random)):
        print(f"  {name:38s}  {1000 * seconds:8.2f} ms/example   ratio to saliency {seconds / t_saliency:6.2f}")
    total = t_metrics + t_sweep + t_random
    print(f"  {'all plausibility work':38s}  {1000 * total:8.2f} ms/example   ratio to saliency {total / t_saliency:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
