#!/usr/bin/env python
"""Benchmark of every explanation method and of the whole Heatmaps page.

Per method, on SST-2 dev sentences with the ``default`` model:
- seconds per explanation, cold (computed) and warm (served by the explanation cache);
- forward / backward passes and model batches;
- the floor: one plain batched forward pass of the same number of inputs (the unperturbed sentence repeated as
  many times as the method ran forward passes), measured in the same run; ratio = cold / floor.
  Target for perturbation methods: ratio <= 1.3.
Whole page: every method the page runs by default (all but LIME-1000, the paper-000 preset) on a 20-word
sentence, cold and cached totals. Targets on the 2-core CPU: < 10 s cold, < 0.3 s cached.
``--app`` also times the real page through AppTest; ``bench/bench_page.py`` splits that page's cold visit (methods,
plan, drawing; imports and model load in a fresh process) and times its cached reruns against another tree (A, B).
Cold estimate (first, before anything else runs in the process): the cost model's estimate of the Heatmaps page's
first computation (every method the page opens with, on the 20-word sentence) before any batch is measured, under
the current rule (FLOPs at a measured matmul rate) and the former fixed 4 000 units/s, against the measured seconds.

    python bench/bench_methods.py            # 8 sentences, default model
    python bench/bench_methods.py --quick    # 2 sentences, no LIME-1000: seconds
    python bench/bench_methods.py --model default-quick --cold-estimate-only   # the cold estimate alone: seconds
    EXWB_THREADS=1 ... on a shared machine (report figures as such)
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import torch  # noqa: E402

from corpora import load_dataset  # noqa: E402
from corpora.records import split_words  # noqa: E402
from evaluation.agreement.measures import agreement_matrix, top_k_table  # noqa: E402
from explainers import REGISTRY, create, format_spec  # noqa: E402
from explainers.cache import ExplanationCache, explain_cached  # noqa: E402
from models import load_classifier  # noqa: E402
from models.metering import REFERENCE_PARAMETERS, Throughput, base_seconds, working_parameters  # noqa: E402
from ui.widgets.heatmap import explanation_row_html  # noqa: E402  (plain HTML, no streamlit)

FOUNDATION = ("saliency", "input_x_gradient", "integrated_gradients", "leave_one_out", "attention")


def method_specs(quick: bool) -> list[tuple[str, str | None]]:
    # the page's methods; MaRC and AML have their own benchmark (bench/bench_mask_learning.py)
    specs = [(m, None) for m, cls in REGISTRY.items() if not (cls.needs_mlm or cls.trains or cls.expensive)]
    if not quick:
        specs.append(("lime", "paper-000"))
    return specs


def floor_seconds(classifier, encoding, n_inputs: int, repeats: int = 2) -> float:
    """One plain batched forward pass of n_inputs copies of the sentence (best of a few)."""
    batch = [encoding] * max(1, n_inputs)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        classifier.predict_logits(batch)
        best = min(best, time.perf_counter() - started)
    return best


def sentences(count: int, words: tuple[int, int] = (12, 30)) -> list[str]:
    examples = load_dataset("sst2:dev")
    chosen = [e.text for e in examples if words[0] <= len(split_words(e.text)) <= words[1]]
    return chosen[:count]


def page_sentence() -> str:
    return next(e.text for e in load_dataset("sst2:dev") if len(split_words(e.text)) == 20)


@contextmanager
def default_cache(cache: ExplanationCache):
    """Point the default explanation cache (used by ensembles for their members) at ``cache`` meanwhile."""
    from explainers import cache as cache_module

    previous = cache_module.DEFAULT_CACHE
    cache_module.DEFAULT_CACHE = cache
    try:
        yield
    finally:
        cache_module.DEFAULT_CACHE = previous


def bench_methods(classifier, texts: list[str], specs) -> list[dict]:
    rows = []
    for method, preset in specs:
        cold, warm, ratios, passes = [], [], [], []
        for text in texts:
            encoding = classifier.encode(text)
            cache = ExplanationCache(directory=None)
            with default_cache(cache):  # ensembles fetch their members through the default cache
                explainer = create(method, preset=preset)
                started = time.perf_counter()
                explanation = explain_cached(explainer, classifier, encoding, None, cache=cache)
                cold.append(time.perf_counter() - started)
                started = time.perf_counter()
                explain_cached(create(method, preset=preset), classifier, encoding, None, cache=cache)
                warm.append(time.perf_counter() - started)
            p = explanation.provenance
            passes.append((p["forward_passes"], p["backward_passes"], p["batches"]))
            if p["forward_passes"] > 0:  # gradient methods include their backward passes: expect > 1
                ratios.append(cold[-1] / floor_seconds(classifier, encoding, p["forward_passes"]))
        rows.append({
            "method": format_spec(method, preset), "family": REGISTRY[method].family,
            "foundation": method in FOUNDATION and preset is None,
            "cold_s": statistics.mean(cold), "warm_s": statistics.mean(warm),
            "forward": statistics.mean(p[0] for p in passes), "backward": statistics.mean(p[1] for p in passes),
            "batches": statistics.mean(p[2] for p in passes),
            "ratio_to_floor": statistics.mean(ratios) if ratios else None,
        })
        row = rows[-1]
        ratio = f"{row['ratio_to_floor']:.2f}x" if row["ratio_to_floor"] is not None else "   -  "
        print(f"  {row['method']:26s} cold {row['cold_s']:7.3f} s  warm {row['warm_s'] * 1000:7.2f} ms  "
              f"fwd {row['forward']:7.1f} bwd {row['backward']:5.1f} batches {row['batches']:5.1f}  "
              f"vs floor {ratio}", flush=True)
    return rows


def bench_page(classifier, text: str, specs) -> dict:
    """All page methods on one sentence as the page runs them (ensembles last), then again from the cache."""
    encoding = classifier.encode(text)
    cache = ExplanationCache(directory=None)
    ordered = sorted(specs, key=lambda s: REGISTRY[s[0]].family == "ensemble")

    def run_all():
        started = time.perf_counter()
        explanations = [explain_cached(create(m, preset=p), classifier, encoding, None, cache=cache)
                        for m, p in ordered]
        agreement_matrix(explanations, "spearman")
        agreement_matrix(explanations, "kendall")
        top_k_table(explanations)
        for explanation in explanations:  # the page draws every row
            explanation_row_html(explanation, "word", "none", False)
        return time.perf_counter() - started

    with default_cache(cache):
        cold = run_all()
        cached = min(run_all() for _ in range(3))
    return {"sentence": text, "words": encoding.n_words, "tokens": encoding.n_tokens, "methods": len(ordered),
            "cold_s": cold, "cached_s": cached}


FORMER_CPU_RATE = 4_000.0  # the fixed cold default before the FLOP rule: units/s for 11 M working parameters


def bench_cold_estimate(classifier, text: str, specs) -> dict:
    """The Heatmaps page's first computation (its methods, nothing cached, nothing measured yet): the cost model's
    cold estimate, under the current and the former rule, against the measured seconds."""
    encoding = classifier.encode(text)
    cold = Throughput.for_model(classifier.model, classifier.device.type)  # what an unmeasured model estimates
    former = Throughput(FORMER_CPU_RATE * REFERENCE_PARAMETERS / working_parameters(classifier.model))
    explainers = [create(m, preset=p) for m, p in sorted(specs, key=lambda s: REGISTRY[s[0]].family == "ensemble")]
    passes = [e.estimate_passes(encoding) for e in explainers]
    cache = ExplanationCache(directory=None)
    with default_cache(cache):  # ensembles fetch their members through the default cache
        started = time.perf_counter()
        for explainer in explainers:
            explain_cached(explainer, classifier, encoding, None, cache=cache)
        measured = time.perf_counter() - started
    # an ensemble's estimate counts its members' passes, which the page has just run and caches: counting them
    # twice is the plan's matter, not the cold rate's, so the ratios use the work the page really does
    work = [p for p, e in zip(passes, explainers) if REGISTRY[e.id].family != "ensemble"]

    def seconds(throughput, counted=work):
        return sum(base_seconds(throughput, f, b, encoding.n_tokens) for f, b in counted)

    estimate, estimate_former = seconds(cold), seconds(former)
    # the rate the page's own batches measured: how far each cold rate was from it
    return {"methods": len(explainers), "tokens": encoding.n_tokens, "measured_s": measured,
            "estimate_s": estimate, "ratio": estimate / measured, "cold_rate": cold.rate,
            "former_estimate_s": estimate_former, "former_ratio": estimate_former / measured,
            "former_rate": former.rate, "measured_rate": classifier.throughput.rate,
            "at_measured_rate_s": seconds(classifier.throughput),
            "with_ensembles_estimate_s": seconds(cold, passes), "with_ensembles_former_s": seconds(former, passes)}


def bench_app(model: str, warm_up_text: str, text: str) -> dict:
    """The real page through Streamlit's AppTest: a new sentence (cold) and a rerun of it (cached)."""
    import os

    from streamlit.testing.v1 import AppTest

    from explainers import cache as cache_module

    os.environ["EXWB_MODEL"] = model
    cache_module.DEFAULT_CACHE.directory = None  # memory only: cold means computed
    root = Path(__file__).resolve().parent.parent
    at = AppTest.from_file(str(root / "app.py"), default_timeout=600)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = warm_up_text
    at.run()  # imports, model loading, first-call costs: not counted
    at.text_area(key="text").set_value(text)
    started = time.perf_counter()
    at.run()
    cold = time.perf_counter() - started
    reruns = []
    for _ in range(3):
        started = time.perf_counter()
        at.run()
        reruns.append(time.perf_counter() - started)
    if at.exception:
        raise RuntimeError(f"the page failed: {at.exception}")
    return {"cold_s": cold, "cached_s": min(reruns)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--model", default="default")
    parser.add_argument("--sentences", type=int, default=8)
    parser.add_argument("--quick", action="store_true", help="2 sentences, no LIME-1000")
    parser.add_argument("--app", action="store_true", help="also time the real page through Streamlit's AppTest")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument("--cold-estimate-only", action="store_true", help="only the cold estimate's accuracy")
    args = parser.parse_args(argv)
    count = 2 if args.quick else args.sentences
    classifier = load_classifier(args.model)
    specs = method_specs(args.quick)
    page_specs = [s for s in specs if s != ("lime", "paper-000")]
    cold = bench_cold_estimate(classifier, page_sentence(), page_specs)  # first: nothing has run or been measured
    print(f"cold estimate of the Heatmaps page's first computation ({cold['methods']} methods, "
          f"{cold['tokens']} tokens): measured {cold['measured_s']:.2f} s; estimated {cold['estimate_s']:.2f} s "
          f"(ratio {cold['ratio']:.2f}, {cold['cold_rate']:.0f} units/s), former rule {cold['former_estimate_s']:.2f} s "
          f"(ratio {cold['former_ratio']:.2f}, {cold['former_rate']:.0f} units/s); the page's batches measured "
          f"{cold['measured_rate']:.0f} units/s (estimate at that rate {cold['at_measured_rate_s']:.2f} s); with the "
          f"ensembles' members counted again: {cold['with_ensembles_estimate_s']:.2f} s, former "
          f"{cold['with_ensembles_former_s']:.2f} s", flush=True)
    if args.cold_estimate_only:
        if args.json:
            args.json.write_text(json.dumps({"cold_estimate": cold, "threads": torch.get_num_threads()}, indent=2))
        return 0
    texts = sentences(count)
    print(f"model {classifier.name} ({classifier.fingerprint}) on {classifier.device}; torch threads "
          f"{torch.get_num_threads()}; {len(texts)} SST-2 dev sentences of "
          f"{statistics.mean(len(split_words(t)) for t in texts):.1f} words", flush=True)
    warm_up = classifier.encode(texts[0])
    for method in ("lime", "kernel_shap", "integrated_gradients"):  # imports (sklearn) and first-call costs
        create(method, n_samples=20).explain(classifier, warm_up) if method != "integrated_gradients" else \
            create(method, n_steps=4).explain(classifier, warm_up)
    print("per method (mean over sentences):", flush=True)
    rows = bench_methods(classifier, texts, specs)
    page = bench_page(classifier, page_sentence(), page_specs)
    print(f"whole page: {page['methods']} methods on a {page['words']}-word sentence ({page['tokens']} tokens): "
          f"cold {page['cold_s']:.2f} s (target < 10 s), cached {page['cached_s'] * 1000:.1f} ms (target < 300 ms)")
    if args.app:
        page["app"] = bench_app(args.model, texts[0], page_sentence())
        print(f"whole page through Streamlit (AppTest, rendering included): cold {page['app']['cold_s']:.2f} s, "
              f"cached rerun {page['app']['cached_s'] * 1000:.0f} ms")
    perturbation = [r for r in rows if r["family"] == "perturbation" and r["ratio_to_floor"] is not None]
    worst = max(perturbation, key=lambda r: r["ratio_to_floor"])
    print(f"perturbation methods vs the batched-forward floor: worst {worst['method']} {worst['ratio_to_floor']:.2f}x "
          f"(target <= 1.3x); over target: "
          f"{', '.join(r['method'] for r in perturbation if r['ratio_to_floor'] > 1.3) or 'none'}")
    if args.json:
        args.json.write_text(json.dumps({"methods": rows, "page": page, "cold_estimate": cold,
                                         "threads": torch.get_num_threads(),
                                         "model": classifier.name}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
