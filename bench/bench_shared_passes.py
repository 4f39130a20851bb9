#!/usr/bin/env python
"""Benchmark of shared passes: the same work with and without sharing, measured in the same run.

1. The Heatmaps page's methods (the 16 it opens with, or ``--page presets``: those plus the preset variants that
   share a pass: every saliency reduction, input x gradient |.|, IG |.|, leave-one-out in probabilities, occlusion
   of window 1) on the 20-word SST-2 dev sentence, cold (a fresh memory cache each time), computed as the page
   does (``plan.make_plan`` + ``plan.run_now``), with sharing (A) and without (B: ``EXWB_SHARE_PASSES=0``),
   interleaved A, B, A, B, best of ``--repeats``. Printed: wall and process CPU seconds, forward and backward
   passes (exact, load-free), the ratio.
2. ``--app``: the real Heatmaps page through Streamlit's AppTest (``bench_methods.bench_app``): a new sentence
   cold, then the cached rerun (target < 0.1 s), best of 3 reruns.
3. ``--limit N``: a dataset run of comprehensiveness + sufficiency (ERASER, 10 random orderings) for six methods
   (saliency, input x gradient, IG with 50 steps, leave-one-out, attention, occlusion) over N SST-2 dev sentences,
   with and without sharing (each in a fresh cache), extrapolated to the 872 dev sentences.

    EXWB_THREADS=1 nice -n 19 python bench/bench_shared_passes.py --model default-quick --repeats 2
    EXWB_THREADS=1 nice -n 19 python bench/bench_shared_passes.py --limit 8 --skip-page
On a shared machine every figure is noisy: report the load average next to it (printed).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import settings  # noqa: E402

settings.prepare_runtime()

from corpora import load_dataset  # noqa: E402
from corpora.records import split_words  # noqa: E402
from explainers import REGISTRY, plan  # noqa: E402
from explainers import cache as cache_module  # noqa: E402
from explainers.choices import MethodChoice  # noqa: E402
from explainers.shared_passes import sharing  # noqa: E402
from models import load_classifier  # noqa: E402

DEV_SIZE = 872
FAITHFULNESS_METHODS = ["saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention",
                        "occlusion"]
PRESET_VARIANTS = [("saliency", {"reduction": "sum"}), ("saliency", {"reduction": "l1"}),
                   ("input_x_gradient", {"absolute": True}), ("integrated_gradients", {"absolute": True}),
                   ("leave_one_out", {"score": "probability"}), ("occlusion", {"window": 1, "operator": "delete"})]


def load() -> str:
    return open("/proc/loadavg").read().split()[0]


@contextmanager
def sharing_switch(on: bool):
    with mock.patch.dict(os.environ, {"EXWB_SHARE_PASSES": "1" if on else "0"}):  # restored on the way out
        yield


def page_sentence() -> str:
    return next(e.text for e in load_dataset("sst2:dev") if len(split_words(e.text)) == 20)


def page_choices(variant: str) -> list[list[MethodChoice]]:
    """One page (the 16 methods), or with ``presets`` several pages: the 16, then each variant in its own
    ``MethodChoice`` set next to the method it shares with (a page holds one row per method id)."""
    base = [MethodChoice(m, None, {}) for m, cls in REGISTRY.items()
            if not (cls.needs_mlm or cls.trains or cls.expensive)]
    if variant == "default":
        return [base]
    return [base] + [[MethodChoice(m, None, overrides)] for m, overrides in PRESET_VARIANTS]


def run_page(classifier, encoding, pages) -> dict:
    """Every page's methods cold: the default cache emptied and memory-only meanwhile (plan.py and cache.py bind
    ``DEFAULT_CACHE`` as a default argument, so the object itself is emptied rather than swapped)."""
    original = cache_module.DEFAULT_CACHE
    original_items = dict(original._items)
    original.clear()
    original_directory = original.directory
    original.directory = None
    wall, cpu = time.perf_counter(), time.process_time()
    forward = backward = 0
    try:
        with sharing():  # one page run: the variant pages ride on the same memo, as one run of the page would
            for choices in pages:
                the_plan = plan.make_plan(choices, classifier, encoding, None, budget=1e9)
                plan.run_now(the_plan, classifier, encoding, None)
                for result in the_plan.results.values():
                    if hasattr(result, "provenance") and not result.provenance.get("cache"):
                        forward += result.provenance["forward_passes"]
                        backward += result.provenance["backward_passes"]
    finally:
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        original.clear()
        original._items.update(original_items)
        original.directory = original_directory
    return {"wall": wall, "cpu": cpu, "forward": forward, "backward": backward}


def bench_page(classifier, variant: str, repeats: int) -> None:
    text = page_sentence()
    encoding = classifier.encode(text)
    pages = page_choices(variant)
    classifier.logits_of(encoding)
    plan.measure_throughput(classifier, encoding)
    run_page(classifier, encoding, pages)  # first-call costs (imports, sklearn), not counted
    results = {True: [], False: []}
    for _ in range(repeats):
        for on in (True, False):  # A, B, A, B
            with sharing_switch(on):
                results[on].append(run_page(classifier, encoding, pages))
    methods = sum(len(p) for p in pages)
    print(f"page ({variant}: {methods} method rows, {encoding.n_words} words, {encoding.n_tokens} tokens), best of "
          f"{repeats}, load {load()} (shared machine, noisy):")
    best = {}
    for on in (True, False):
        fastest = min(results[on], key=lambda r: r["wall"])
        best[on] = fastest
        print(f"  {'with' if on else 'without':7s} sharing: wall {fastest['wall']:6.2f} s  cpu "
              f"{min(r['cpu'] for r in results[on]):6.2f} s  forward passes {fastest['forward']:5d}  "
              f"backward passes {fastest['backward']:4d}")
    print(f"  ratio with / without: wall {best[True]['wall'] / best[False]['wall']:.2f}, forward "
          f"{best[True]['forward'] / max(1, best[False]['forward']):.3f}, backward "
          f"{best[True]['backward'] / max(1, best[False]['backward']):.3f}", flush=True)


def bench_dataset(model: str, limit: int) -> None:
    from evaluation.runs.store import ResultStore
    from evaluation.suite.runner import run_evaluation

    real_models = settings.cache_dir() / "models"
    figures = {}
    for on in (True, False):
        folder = Path(tempfile.mkdtemp(prefix="bench-shared-"))
        (folder / "models").symlink_to(real_models, target_is_directory=True)
        os.environ["EXWB_CACHE_DIR"] = str(folder)
        cache_module.DEFAULT_CACHE.clear()
        with sharing_switch(on):
            wall, cpu = time.perf_counter(), time.process_time()
            store, summary = run_evaluation(model, "sst2:dev", FAITHFULNESS_METHODS, ["eraser"], limit=limit,
                                            options={"random_orderings": 10}, store=ResultStore(folder / "r.sqlite"))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        assert summary.status == "finished", summary.errors
        figures[on] = (wall, cpu)
        print(f"  {'with' if on else 'without':7s} sharing: {limit} sentences in {wall:.1f} s wall, {cpu:.1f} s cpu; "
              f"projected to {DEV_SIZE}: {wall / limit * DEV_SIZE / 60:.1f} min (load {load()}, shared machine, "
              f"noisy)", flush=True)
    print(f"  ratio with / without: wall {figures[True][0] / figures[False][0]:.2f}, cpu "
          f"{figures[True][1] / figures[False][1]:.2f}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--model", default="default")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--page", choices=("default", "presets"), default="default")
    parser.add_argument("--limit", type=int, default=0, help="also the dataset run over N sentences")
    parser.add_argument("--skip-page", action="store_true")
    parser.add_argument("--app", action="store_true", help="also the real page's cold run and cached rerun (AppTest)")
    args = parser.parse_args(argv)
    if not args.skip_page:
        classifier = load_classifier(args.model)
        bench_page(classifier, args.page, args.repeats)
    if args.app:
        from bench_methods import bench_app, sentences  # the same AppTest measurement as bench_methods --app

        app = bench_app(args.model, sentences(1)[0], page_sentence())
        print(f"Heatmaps page through AppTest: cold {app['cold_s']:.2f} s, cached rerun "
              f"{app['cached_s'] * 1000:.0f} ms (load {load()}, shared machine, noisy)", flush=True)
    if args.limit:
        print(f"comprehensiveness + sufficiency, {len(FAITHFULNESS_METHODS)} methods, {args.limit} sentences:")
        bench_dataset(args.model, args.limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
