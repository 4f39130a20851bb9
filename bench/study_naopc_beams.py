#!/usr/bin/env python
"""How far NAOPC's greedy bounds (beam width 1) are from Edin et al.'s width 5, and both from the exact
bounds, on SST-2 dev sentences; and what NAOPC costs in a dataset run against the AOPC curves it normalizes.

For each sentence (``--limit`` sentences of 6-30 words, default-quick): six methods + 10 random orderings (the
run's own seeds), scored as a run scores them (``naopc.score_orders``) with the search forced to a beam of width 1,
a beam of width 5, and (inputs of <= 10 words) the exact search. Reported:
- bounds: mean / max |difference| of the AOPC min and max (AOPC scale, divisor n + 1), beam 1 vs beam 5 and each
  beam vs exact;
- NAOPC values (every method and random ordering, comprehensiveness and sufficiency): mean / max |difference|;
- the ranking of the methods: Kendall tau of the method means (random's mean included), forced beam and as
  deployed (exact up to 8 words, the beam above), and the share of sentences whose per-sentence order changes;
- cost as used: forward passes (exact, load-free) and CPU seconds of NAOPC (bounds + curves) per width as deployed,
  against the AOPC curves alone for the same orderings.

    EXWB_THREADS=1 nice -n 19 python bench/study_naopc_beams.py --limit 40
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_faithfulness import PREFERRED, isolated_cache  # noqa: E402  (also prepares the runtime)

METHODS = [m for m in PREFERRED if m != "random"][:6]
WIDTHS = (1, 5)
EXACT_UP_TO = 10  # the exact reference on inputs this short (2^10 - 1 rows at most)
DEPLOYED_EXACT = 8  # NaopcOptions().naopc_exact_words
IDS = ("naopc-comprehensiveness", "naopc-sufficiency")


def kendall(a, b) -> float:
    return float(kendalltau(a, b).statistic)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--limit", type=int, default=40, help="sentences of 6-30 words")
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--out", default=None, help="write the per-sentence records here (JSON)")
    parser.add_argument("--report", default=None, help="only print the report of records written by --out")
    args = parser.parse_args()
    if args.report:
        report(json.loads(Path(args.report).read_text()))
        return 0
    isolated_cache()

    from corpora import load_dataset
    from evaluation.baselines import orderings_seed
    from evaluation.faithfulness import naopc, naopc_bounds
    from evaluation.faithfulness.curves import RemovalOptions, evaluate_orders, random_orders, rank_words
    from explainers import create
    from explainers.cache import explain_cached
    from models import load_classifier, metered

    classifier = load_classifier(args.model)
    examples = [e for e in load_dataset("sst2:dev") if 6 <= classifier.encode(e.text).n_words <= 30][:args.limit]
    print(f"{len(examples)} SST-2 dev sentences of 6-30 words, {args.model}, methods {', '.join(METHODS)} + 10 random "
          f"orderings; load average {open('/proc/loadavg').read().split()[:3]}", flush=True)
    records = []
    for number, example in enumerate(examples):
        encoding = classifier.encode(example.text)
        n = encoding.n_words
        explanations = [explain_cached(create(m), classifier, encoding) for m in METHODS]
        orders = np.vstack([rank_words(e.word_scores) for e in explanations] +
                           [random_orders(n, 10, orderings_seed(0, encoding.key))])
        record = {"n": n, "search": {}}
        searches = [(f"beam-{w}", {"naopc_exact_words": 1, "naopc_beam": w}) for w in WIDTHS]
        if n <= EXACT_UP_TO:
            searches.append(("exact", {"naopc_exact_words": 16}))
        for name, options in searches:
            naopc_bounds._cache.clear()
            with metered() as meter:
                cpu = time.process_time()
                scored, bounds = naopc.score_orders(classifier, encoding, orders, options)
                seconds = time.process_time() - cpu
            record["search"][name] = {
                "bounds": list(bounds.values[IDS[0]]), "passes": meter.forward_passes, "cpu": seconds,
                "values": {m: [float(v[m]) for v in scored] for m in IDS}}
        with metered() as meter:  # the AOPC curves alone (what NAOPC normalizes), same orderings
            cpu = time.process_time()
            evaluate_orders(classifier, encoding, list(naopc_bounds.METRICS), orders, RemovalOptions())
            record["aopc"] = {"passes": meter.forward_passes, "cpu": time.process_time() - cpu}
        records.append(record)
        print(f"  {number + 1:2d}/{len(examples)} {n:2d} words: " + ", ".join(
            f"{k} {v['passes']} passes" for k, v in record["search"].items()) +
            f", AOPC {record['aopc']['passes']}", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(records))
    report(records)
    return 0


def deployed(record: dict, width: int) -> dict:
    """The search a run uses by default: exact up to 8 words, the beam above."""
    return record["search"]["exact" if record["n"] <= DEPLOYED_EXACT else f"beam-{width}"]


def report(records: list[dict]) -> None:
    n_methods = len(METHODS)

    def differences(pairs):
        bounds = np.array([abs(a["bounds"][i] - b["bounds"][i]) for a, b in pairs for i in (0, 1)])
        values = {m: np.array([abs(x - y) for a, b in pairs for x, y in zip(a["values"][m], b["values"][m])
                               if np.isfinite(x) and np.isfinite(y)]) for m in IDS}
        return bounds, values

    def line(label, pairs):
        if not pairs:
            return
        bounds, values = differences(pairs)
        print(f"  {label:44s} {len(pairs):3d} sentences | bounds |d| mean {bounds.mean():.4f} max {bounds.max():.4f}"
              + "".join(f" | {m.split('-')[1][:4]} NAOPC |d| mean {v.mean():.4f} max {v.max():.4f}"
                        for m, v in values.items()))

    print("\nbeam 1 against beam 5 and both against exact (AOPC scale for the bounds):")
    line("beam 1 vs beam 5, every sentence", [(r["search"]["beam-1"], r["search"]["beam-5"]) for r in records])
    line("beam 1 vs beam 5, > 8 words", [(r["search"]["beam-1"], r["search"]["beam-5"]) for r in records
                                         if r["n"] > DEPLOYED_EXACT])
    short = [r for r in records if "exact" in r["search"]]
    for w in WIDTHS:
        line(f"beam {w} vs exact, <= {EXACT_UP_TO} words", [(r["search"][f"beam-{w}"], r["search"]["exact"])
                                                          for r in short])
        line(f"beam {w} vs exact, {DEPLOYED_EXACT + 1}-{EXACT_UP_TO} words (beam deployed)",
             [(r["search"][f"beam-{w}"], r["search"]["exact"]) for r in short if r["n"] > DEPLOYED_EXACT])
    for w in WIDTHS:
        hits = np.mean([abs(r["search"][f"beam-{w}"]["bounds"][i] - r["search"]["exact"]["bounds"][i]) < 1e-6
                        for r in short for i in (0, 1)]) if short else float("nan")
        print(f"  beam {w}: bounds equal to the exact ones in {hits:.0%} of the <= {EXACT_UP_TO}-word bounds")

    print("\nranking of the methods (means over sentences; the random orderings' mean as a 7th entry):")
    for metric in IDS:
        def means(pick):
            rows = np.array([pick(r)["values"][metric] for r in records])  # sentences x (methods + 10 random)
            return np.r_[np.nanmean(rows[:, :n_methods], axis=0), np.nanmean(rows[:, n_methods:])]
        for label, pick in (("forced beam", lambda r, w: r["search"][f"beam-{w}"]),
                            ("as deployed", deployed)):
            one, five = means(lambda r: pick(r, 1)), means(lambda r: pick(r, 5))
            changed = np.mean([kendall(pick(r, 1)["values"][metric][:n_methods],
                                       pick(r, 5)["values"][metric][:n_methods]) < 1 - 1e-6 for r in records])
            print(f"  {metric:24s} {label:12s} tau {kendall(one, five):.3f}; means beam 1 "
                  f"{np.round(one, 3).tolist()} beam 5 {np.round(five, 3).tolist()}; per-sentence order changed in "
                  f"{changed:.0%}")

    print("\ncost in a run as used (6 methods + 10 random orderings per sentence; passes exact, CPU s loaded):")
    aopc_passes = sum(r["aopc"]["passes"] for r in records)
    aopc_cpu = sum(r["aopc"]["cpu"] for r in records)
    print(f"  AOPC curves alone: {aopc_passes} passes, {aopc_cpu:.1f} CPU s")
    for w in WIDTHS:
        passes = sum(deployed(r, w)["passes"] for r in records)
        cpu = sum(deployed(r, w)["cpu"] for r in records)
        print(f"  NAOPC, exact <= {DEPLOYED_EXACT}, beam {w} above: {passes} passes ({passes / aopc_passes:.2f}x), "
              f"{cpu:.1f} CPU s ({cpu / aopc_cpu:.2f}x)")


if __name__ == "__main__":
    sys.exit(main())
