#!/usr/bin/env python
"""Benchmark: the report card's cost per check (target: "--limit 100 within 30 minutes on the 2-core CPU").

Builds the card one check at a time into a fresh result store (nothing reopened) at small sizes and prints, per
check, CPU seconds (``time.process_time``) next to wall seconds and the number of examples it ran; then
extrapolates each check to the card's default sizes (``CardConfig()``: ``--limit 100``, 50 sanity examples, 8
attacked, 100 known-feature). A check's cost is taken as fixed + per-example; the fixed part (loading, the chance
band) is measured by running each check at two sizes when ``--two-sizes`` is given, else counted as per-example
(an upper bound). CPU seconds with one torch thread bound the idle 2-core wall from above.

    python bench/bench_report_card.py --model default-quick --limit 10   # the figures in docs/benchmarks.md
    python bench/bench_report_card.py --quick                             # CardConfig.quick() sizes, a minute
    python bench/bench_report_card.py --model default --count             # exact counts at the default sizes
    python bench/bench_report_card.py --model default --adversarial 2,6   # the card's attack check, estimated

``--count`` times nothing: it counts, at the card's default sizes, the explanations each check computes and their
(forward, backward) passes as each method's ``estimate_passes`` states them (an upper bound where methods share a
pass), before and after the sanity check took the original model's explanations from the faithfulness run, and
the attack's passes (``adversarial.config.passes``). Counts do not depend on the machine's load.

``--adversarial S1,S2`` runs the card's adversarial check alone at its default size (``attack_limit`` sentences,
batched as the card runs them) twice, with S1 and S2 optimization steps (at most 20: the early stop needs 20 quiet
steps, so none stops early), and extrapolates the line through the two CPU (and wall) figures to the card's
``attack_steps``: fixed part (the clean explanations, IG's full re-explanation) + steps x cost per step. Without
early stops, so an upper bound of the check.

Explanations are kept in memory only (the disk cache would make a second run free).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

from corpora import load_dataset  # noqa: E402
from evaluation.adversarial.config import ATTACKED_METHODS, config_for, passes  # noqa: E402
from evaluation.runs.store import ResultStore  # noqa: E402
from evaluation.suite.report_card import CardConfig, build_report_card, default_methods  # noqa: E402
from evaluation.suite.report_card_rules import RULES  # noqa: E402
from explainers import create_from_spec, split_spec  # noqa: E402
from explainers.cache import DEFAULT_CACHE  # noqa: E402
from models import cached_classifier  # noqa: E402

SIZE_OF = {"faithfulness": "limit", "agreement": "limit", "sanity": "sanity_limit", "adversarial": "attack_limit",
           "known_feature": "known_feature_limit", "plausibility": "plausibility_limit"}


def measure(model: str, dataset: str, check: str, config: CardConfig, store: ResultStore) -> dict:
    config = replace(config, checks=(check,))
    cpu, wall = time.process_time(), time.perf_counter()
    card = build_report_card(model, dataset, default_methods(), config=config, store=store)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return {"check": check, "examples": getattr(config, SIZE_OF[check]), "cpu_s": round(cpu, 1),
            "wall_s": round(wall, 1), "errors": card["errors"],
            "not_applicable": sorted({r["not_applicable"] for r in card["rows"] if r["not_applicable"]})}


def explanation_passes(model: str, dataset: str, limit: int) -> tuple[int, int, int]:
    """(explanations, forward passes, backward passes) of the card's methods on the first ``limit`` examples."""
    classifier = cached_classifier(model)
    explainers = [create_from_spec(m) for m in default_methods()]
    count = forward = backward = 0
    for example in load_dataset(dataset, limit=limit, label_names=classifier.labels):
        encoding = classifier.encode(example.text, example.pair)
        for explainer in explainers:
            f, b = explainer.estimate_passes(encoding)
            count, forward, backward = count + 1, forward + f, backward + b
    return count, forward, backward


def counts(model: str, dataset: str, config: CardConfig) -> list[dict]:
    """Per check: explanations and passes at ``config``'s sizes, before and after the sharing."""
    faithfulness = explanation_passes(model, dataset, config.limit)
    original = explanation_passes(model, dataset, config.sanity_limit)  # the randomized model's are the same
    shared = explanation_passes(model, dataset, min(config.sanity_limit, config.limit))  # served from the cache
    attack_config = config_for(None, steps=config.attack_steps, seed=config.seed,
                               loop_ig_steps=config.attack_loop_ig_steps)
    attacked = [split_spec(m)[0] for m in default_methods() if split_spec(m)[0] in ATTACKED_METHODS]
    per_sentence = [passes(m, attack_config) for m in attacked]
    rows = [{"check": "faithfulness", "explanations": faithfulness[0], "passes_before": faithfulness[1:],
             "passes_after": faithfulness[1:]},
            {"check": "agreement", "explanations": 0, "passes_before": (0, 0), "passes_after": (0, 0),
             "note": "reopens the faithfulness run"},
            {"check": "sanity", "explanations_before": 2 * original[0],
             "explanations_after": 2 * original[0] - shared[0],
             "passes_before": (2 * original[1], 2 * original[2]),
             # a served explanation costs one forward: the check that the entry's "predicted class" is the target
             "passes_after": (2 * original[1] - shared[1] + shared[0], 2 * original[2] - shared[2])},
            {"check": "adversarial", "sentences_at_most": config.attack_limit,
             "passes_per_sentence": dict(zip(attacked, per_sentence)),
             "passes_at_most": (config.attack_limit * sum(p[0] for p in per_sentence),
                                config.attack_limit * sum(p[1] for p in per_sentence))},
            {"check": "known_feature", "note": "another model (the twin) on other data: nothing to share with "
                                               "faithfulness", "explanations": config.known_feature_limit
             * len(default_methods())}]
    return rows


def adversarial_estimate(model: str, dataset: str, steps: tuple[int, int]) -> None:
    """The card's adversarial check at its default size, at two step counts, extrapolated (module docstring)."""
    target = CardConfig()
    figures = []
    for count in steps:
        store = ResultStore(Path(tempfile.mkdtemp(prefix="card-attack-")) / "results.sqlite")
        row = measure(model, dataset, "adversarial", replace(target, attack_steps=count), store)
        figures.append((count, row["cpu_s"], row["wall_s"]))
        print(json.dumps({**row, "attack_steps": count, "load": open("/proc/loadavg").read().strip()}), flush=True)
    (s1, cpu1, wall1), (s2, cpu2, wall2) = figures
    per_step_cpu, per_step_wall = (cpu2 - cpu1) / (s2 - s1), (wall2 - wall1) / (s2 - s1)
    cpu = cpu1 + per_step_cpu * (target.attack_steps - s1)
    # the wall line is printed, not trusted: on a loaded machine the two runs' loads differ (it can even fall)
    print(f"# adversarial check, {target.attack_limit} sentences, {target.attack_steps} steps without early stop: "
          f"about {cpu / 60:.1f} CPU min ({per_step_cpu:.2f} CPU s per step, {cpu1 - per_step_cpu * s1:.0f} CPU s "
          f"fixed); wall per step {per_step_wall:.2f} s on this run's load {open('/proc/loadavg').read().strip()}",
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--dataset", default="sst2:dev")
    parser.add_argument("--limit", type=int, default=10, help="faithfulness/agreement, known-feature, plausibility")
    parser.add_argument("--sanity-limit", type=int, default=5)
    parser.add_argument("--attack-limit", type=int, default=2)
    parser.add_argument("--checks", default=",".join(RULES))
    parser.add_argument("--known-feature-model", default=None, help="default: the card's model (same size as the "
                                                                    "known-feature model, for cost only)")
    parser.add_argument("--plausibility-dataset", default="eraser-movies:validation")
    parser.add_argument("--quick", action="store_true", help="CardConfig.quick() sizes")
    parser.add_argument("--count", action="store_true", help="exact explanation and pass counts at the default "
                                                             "sizes, no timing")
    parser.add_argument("--adversarial", default=None, metavar="S1,S2",
                        help="the card's adversarial check at its default size with S1 and S2 steps, extrapolated")
    args = parser.parse_args()
    if args.adversarial:
        DEFAULT_CACHE.directory = None
        low, high = (int(v) for v in args.adversarial.split(","))
        if not 0 < low < high <= 20:
            parser.error("--adversarial S1,S2: 0 < S1 < S2 <= 20 (no early stop below 21 steps)")
        adversarial_estimate(args.model, args.dataset, (low, high))
        return 0
    if args.count:
        for row in counts(args.model, args.dataset, CardConfig()):
            print(json.dumps(row), flush=True)
        return 0
    DEFAULT_CACHE.directory = None  # every explanation computed in this run, none read from an earlier one
    config = CardConfig(limit=args.limit, sanity_limit=args.sanity_limit, attack_limit=args.attack_limit,
                        known_feature_limit=args.limit, plausibility_limit=args.limit,
                        known_feature_model=args.known_feature_model or args.model,
                        plausibility_dataset=args.plausibility_dataset)
    if args.quick:
        config = CardConfig.quick(known_feature_model=config.known_feature_model,
                                  plausibility_dataset=config.plausibility_dataset)
    target = CardConfig()
    store = ResultStore(Path(tempfile.mkdtemp(prefix="card-bench-")) / "results.sqlite")
    print(f"# {args.model} on {args.dataset}, methods {', '.join(default_methods())}; load {open('/proc/loadavg').read().strip()}",
          flush=True)
    total = 0.0
    for check in (c.strip() for c in args.checks.split(",") if c.strip()):
        row = measure(args.model, args.dataset, check, config, store)
        full = getattr(target, SIZE_OF[check])
        row["estimate_cpu_s_at_default_sizes"] = round(row["cpu_s"] / row["examples"] * full, 0)
        total += row["estimate_cpu_s_at_default_sizes"]
        print(json.dumps(row), flush=True)
    print(f"# estimate at the default sizes (per-example scaling, an upper bound): {total / 60:.1f} CPU min; "
          f"load {open('/proc/loadavg').read().strip()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
