#!/usr/bin/env python
"""Benchmark of the faithfulness metrics (issue 4): comprehensiveness + sufficiency (ERASER preset, with the
10-ordering random baseline) for six methods over SST-2 dev sentences with the ``default`` model.

Figures:
- end to end: a dataset run exactly as `cli.py evaluate` does it (explanations computed cold, metrics, random
  baseline, per-example storage), seconds per sentence and the projection to all 872 dev sentences.
  Target on the 2-core CPU: < 15 minutes for the 872.
- the metric part alone (explanations already cached): batched (every keep mask of both curves of all six
  methods and of the 10 random orderings in one engine call, each distinct perturbed input once) against the
  baseline measured in the same run: one forward pass per perturbed copy. Ratio = batched / unbatched.

    python bench/bench_faithfulness.py --limit 40      # 40 sentences, projection to 872
    python bench/bench_faithfulness.py                 # all 872 sentences (the lead's run)
    python bench/bench_faithfulness.py --quick         # 6 sentences, default-quick model: seconds
    EXWB_THREADS=1 nice -n 10 ... on a shared machine (report figures as such)
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import settings  # noqa: E402

settings.prepare_runtime()

DEV_SIZE = 872
TARGET_SECONDS = 15 * 60
PREFERRED = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention", "occlusion",
             "random")


def isolated_cache() -> Path:
    """A fresh cache directory (cold explanations, empty result store) that still sees the prepared models."""
    real_models = settings.cache_dir() / "models"
    folder = Path(tempfile.mkdtemp(prefix="bench-faithfulness-"))
    (folder / "models").symlink_to(real_models, target_is_directory=True)
    os.environ["EXWB_CACHE_DIR"] = str(folder)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--limit", type=int, default=DEV_SIZE, help="SST-2 dev sentences (default: all 872)")
    parser.add_argument("--quick", action="store_true", help="6 sentences with default-quick: runs in seconds")
    parser.add_argument("--model", default=None, help="default (default-quick with --quick)")
    parser.add_argument("--methods", default=None, help="comma-separated (default: six methods, see PREFERRED)")
    parser.add_argument("--metric-sample", type=int, default=30, help="sentences for the batched/unbatched ratio")
    parser.add_argument("--random-orderings", type=int, default=10,
                        help="random-baseline orderings per sentence (10 as in every table; 0 = metrics only)")
    args = parser.parse_args()
    limit = 6 if args.quick else args.limit
    model = args.model or ("default-quick" if args.quick else "default")
    folder = isolated_cache()

    import numpy as np

    from corpora import load_dataset
    from evaluation.runs.runner import run_evaluation
    from evaluation.faithfulness.curves import RemovalOptions, keep_rows, rank_words
    from evaluation.faithfulness.presets import BY_ID
    from evaluation.faithfulness.random_band import methods_and_random
    from evaluation.runs.store import ResultStore
    from explainers import REGISTRY, create
    from explainers.cache import explain_cached
    from models import load_classifier, metered
    from models.perturb import perturbed_logits

    methods = args.methods.split(",") if args.methods else [m for m in PREFERRED if m in REGISTRY][:6]
    classifier = load_classifier(model)
    print(f"model {model} ({classifier.fingerprint}) on {classifier.device}; threads: "
          f"{os.environ.get('EXWB_THREADS', 'default')}; methods: {', '.join(methods)}; cache: {folder}")

    # ----- end to end, as cli.py evaluate runs it -------------------------------------------------------
    store = ResultStore(folder / "results.sqlite")
    started = time.perf_counter()
    with metered() as meter:
        store, summary = run_evaluation(model, "sst2:dev", methods, ["eraser"], limit=limit,
                                        options={"random_orderings": args.random_orderings, "seed": 0},
                                        store=store)
    total = time.perf_counter() - started
    per_sentence = total / max(1, summary.done)
    projected = per_sentence * DEV_SIZE
    print(f"\nend to end: {summary.done} sentences x {len(methods)} methods, comp + suff (ERASER) + random baseline "
          f"({args.random_orderings} orderings): {total:.1f} s = {per_sentence:.3f} s / sentence; "
          f"{meter.forward_passes} forward, "
          f"{meter.backward_passes} backward passes in {meter.batches} batches")
    print(f"projected to all {DEV_SIZE} dev sentences: {projected / 60:.1f} min (target < {TARGET_SECONDS / 60:.0f} "
          f"min: {'met' if projected < TARGET_SECONDS else 'NOT met'}){'' if limit < DEV_SIZE else ' (measured)'}")
    if summary.errors:
        print(f"warning: {len(summary.errors)} failed: {next(iter(summary.errors.values()))}")
    explain_seconds = {m: 0.0 for m in methods}
    for cell in store.cells(summary.run_id).values():
        for method, info in cell.get("explanations", {}).items():
            explain_seconds[method] += info["seconds"]
    explaining = sum(explain_seconds.values())
    print("  explanations: " + ", ".join(f"{m} {s:.1f} s" for m, s in explain_seconds.items()) +
          f" (total {explaining:.1f} s = {explaining / max(total, 1e-9):.0%})")
    print(f"  metrics + random baseline + storage: {total - explaining:.1f} s "
          f"({(total - explaining) / max(1, summary.done):.3f} s / sentence)")

    # ----- the metric part: batched vs one forward per perturbed copy ------------------------------------
    metrics = [BY_ID["comprehensiveness-eraser"], BY_ID["sufficiency-eraser"]]
    examples = load_dataset("sst2:dev", limit=min(limit, args.metric_sample))
    encodings = [classifier.encode(e.text) for e in examples]
    explanations = [{m: explain_cached(create(m), classifier, enc) for m in methods} for enc in encodings]
    options = RemovalOptions()

    def batched() -> float:
        out = 0.0
        for enc, per_method in zip(encodings, explanations):
            scores = {m: e.word_scores for m, e in per_method.items()}
            results, baseline = methods_and_random(classifier, enc, metrics, scores, options, n=args.random_orderings)
            out += sum(r.values[metrics[0].id] for r in results.values())
        return out

    def unbatched() -> float:
        out = 0.0
        for enc, per_method in zip(encodings, explanations):
            classifier.predict_logits([enc])
            orders = [rank_words(e.word_scores) for e in per_method.values()]
            shuffled = np.tile(np.arange(enc.n_words), (args.random_orderings, 1))
            orders += list(np.random.default_rng(0).permuted(shuffled, axis=1))
            for order in orders:
                for metric in metrics:
                    counts, _ = metric.points(enc.n_words, enc.n_words)
                    for row in keep_rows(np.asarray(order), counts, metric.mode):
                        out += float(perturbed_logits(classifier, enc, row[None, :], "delete")[0, 0])
        return out

    timings = {}
    for name, function in (("batched", batched), ("unbatched", unbatched)):
        function()  # warm-up (tokenizer, allocator)
        started = time.perf_counter()
        function()
        timings[name] = time.perf_counter() - started
    pairs = len(encodings) * len(methods)
    print(f"\nmetric part on {len(encodings)} sentences ({pairs} method curves + {args.random_orderings} random "
          f"orderings each, "
          f"2 curves x 5 points):")
    print(f"  batched   {timings['batched']:.2f} s ({timings['batched'] / len(encodings) * 1000:.0f} ms / sentence)")
    print(f"  unbatched {timings['unbatched']:.2f} s (one forward per perturbed copy; baseline, same run)")
    print(f"  ratio batched / unbatched = {timings['batched'] / timings['unbatched']:.2f}")
    print(f"  metric share of the end-to-end time: "
          f"{timings['batched'] / len(encodings) / per_sentence:.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
