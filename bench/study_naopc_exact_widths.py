#!/usr/bin/env python
"""NAOPC's beam widths 1, 2, 4, 8 against the EXACT bounds, on SST-2 dev sentences where exact is feasible.

For each sentence (SST-2 dev, ``--min-words``..``--max-words`` words, default-quick) and the issue's sentence "it all
feels like a monty python sketch gone horribly wrong .": six methods + 10 random orderings (the run's seeds), scored
as a run scores them (``naopc.score_orders``, every ordering of the input in one call, so they share one bound) with
the exact search (every subset scored, a dynamic programme over subsets: the optimum over all n! orderings) and with a
beam of each width forced. Printed (no asserts):
- per width: worst and mean |NAOPC_beam - NAOPC_exact| over every ordering and both metrics (comprehensiveness,
  sufficiency), with the shared bound and, for comparison, as before it (each ordering's beam bound
  widened by its own AOPCs only);
- the share of bounds equal to the exact ones, and the cost: forward rows (``metered``) of the bound search per width
  against width 1, and against the exact search.

    HF_HUB_OFFLINE=1 EXWB_THREADS=1 OMP_NUM_THREADS=1 nice -n 19 python bench/study_naopc_exact_widths.py --limit 20
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
WIDTHS = (1, 2, 4, 8)
IDS = ("naopc-comprehensiveness", "naopc-sufficiency")
ISSUE_SENTENCE = "it all feels like a monty python sketch gone horribly wrong ."


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--limit", type=int, default=20, help="SST-2 dev sentences (plus the issue's sentence)")
    parser.add_argument("--min-words", type=int, default=9)
    parser.add_argument("--max-words", type=int, default=14, help="exact costs 2^n rows: 14 words = 16,383 rows")
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--issue", type=int, default=1, choices=(0, 1), help="include the issue's sentence (1)")
    parser.add_argument("--out", default=None, help="write the per-sentence records here (JSON)")
    parser.add_argument("--report", default=None, help="only print the report of records written by --out "
                        "(several files: comma-separated)")
    args = parser.parse_args()
    if args.report:
        report([record for name in args.report.split(",") for record in json.loads(Path(name).read_text())])
        return 0
    isolated_cache()

    from corpora import load_dataset
    from evaluation.baselines import orderings_seed
    from evaluation.faithfulness import naopc, naopc_bounds
    from evaluation.faithfulness.curves import random_orders, rank_words
    from explainers import create
    from explainers.cache import explain_cached
    from models import load_classifier, metered

    classifier = load_classifier(args.model)
    texts = [ISSUE_SENTENCE] * args.issue + [e.text for e in load_dataset("sst2:dev")
                                if args.min_words <= classifier.encode(e.text).n_words <= args.max_words
                                and e.text != ISSUE_SENTENCE][:args.limit]
    source = "the issue's + " if args.issue else ""
    print(f"{len(texts)} sentences ({source}SST-2 dev, {args.min_words}-{args.max_words} words), {args.model}, "
          f"methods {', '.join(METHODS)} + 10 random orderings; load {open('/proc/loadavg').read().split()[:3]}",
          flush=True)
    records = []
    for number, text in enumerate(texts):
        encoding = classifier.encode(text)
        n = encoding.n_words
        explanations = [explain_cached(create(m), classifier, encoding) for m in METHODS]
        orders = np.vstack([rank_words(e.word_scores) for e in explanations] +
                           [random_orders(n, 10, orderings_seed(0, encoding.key))])
        record = {"text": text, "n": n, "search": {}}
        searches = [("exact", {"naopc_exact_words": 16})] + [
            (f"beam-{w}", {"naopc_exact_words": 1, "naopc_beam": w}) for w in WIDTHS]
        for name, options in searches:
            naopc_bounds._cache.clear()
            with metered() as meter:
                cpu = time.process_time()
                scored, bounds = naopc.score_orders(classifier, encoding, orders, options)
                seconds = time.process_time() - cpu
            record["search"][name] = {
                "bounds": {m: list(bounds.values[m]) for m in IDS}, "passes": meter.forward_passes, "cpu": seconds,
                "values": {m: [float(v[m]) for v in scored] for m in IDS},
                "aopc": {m: [float(v.details[m]["aopc"]) for v in scored] for m in IDS}}
            if name != "exact":
                record["search"][name]["beam_only"] = beam_only(naopc_bounds, classifier, encoding, options)
        records.append(record)
        if args.out:  # after every sentence: a long study interrupted still leaves its records
            Path(args.out).write_text(json.dumps(records))
        print(f"  {number + 1:2d}/{len(texts)} {n:2d} words: " + ", ".join(
            f"{k} {v['passes']} rows {v['cpu']:.1f}s" for k, v in record["search"].items()), flush=True)
    report(records)
    return 0


def beam_only(naopc_bounds, classifier, encoding, options) -> dict:
    """The beam's bounds alone (AOPC scale), from a fresh search: what each ordering was normalized by before
    the shared bound (widened by that ordering's own AOPCs only)."""
    from evaluation.faithfulness.curves import RemovalOptions, base_logits, target_class
    from explainers.params import options_from

    naopc_bounds._cache.clear()
    removal = options_from(RemovalOptions, options)
    logits0 = base_logits(classifier, encoding)
    bounds = naopc_bounds.aopc_bounds(classifier, encoding, removal, options_from(naopc_bounds.NaopcOptions, options),
                                      target_class(removal, logits0, None, None), options)
    return {m: list(bounds.values[m]) for m in IDS}


def old_values(search: dict) -> dict:
    """NAOPC before the shared bound: the beam bound widened by the ordering's own comprehensiveness and sufficiency
    AOPCs (both metrics share a curve key and a divisor n + 1 under the defaults)."""
    out = {}
    for m in IDS:
        values = []
        for comp, suff, aopc in zip(search["aopc"][IDS[0]], search["aopc"][IDS[1]], search["aopc"][m]):
            low, high = search["beam_only"][m]
            low, high = min(low, comp, suff), max(high, comp, suff)
            values.append((aopc - low) / (high - low) if high > low else float("nan"))
        out[m] = values
    return out


def report(records: list[dict]) -> None:
    print(f"\n{len(records)} sentences, {min(r['n'] for r in records)}-{max(r['n'] for r in records)} words; "
          "|NAOPC_beam - NAOPC_exact| over every ordering (6 methods + 10 random) and both metrics:")
    print(f"  {'width':>5} | {'worst':>6} {'mean':>7} | {'own bound: worst':>22} {'mean':>7} | "
          f"{'bounds exact':>12} | {'rows vs width 1':>15} | {'rows vs exact':>13}")
    rows1 = sum(r["search"]["beam-1"]["passes"] for r in records)
    rows_exact = sum(r["search"]["exact"]["passes"] for r in records)
    for w in WIDTHS:
        name = f"beam-{w}"
        new, old, hits = [], [], []
        for r in records:
            exact, beam = r["search"]["exact"], r["search"][name]
            before = old_values(beam)
            for m in IDS:
                for x, y, z in zip(beam["values"][m], exact["values"][m], before[m]):
                    if np.isfinite(x) and np.isfinite(y):
                        new.append(abs(x - y))
                    if np.isfinite(z) and np.isfinite(y):
                        old.append(abs(z - y))
                hits += [abs(a - b) < 1e-6 for a, b in zip(beam["beam_only"][m], exact["bounds"][m])]
        rows = sum(r["search"][name]["passes"] for r in records)
        print(f"  {w:>5} | {max(new):6.3f} {np.mean(new):7.4f} | {max(old):22.3f} {np.mean(old):7.4f} | "
              f"{np.mean(hits):12.0%} | {rows / rows1:14.2f}x | {rows / rows_exact:12.3f}x")
    print("\nranking of the methods: Kendall tau of the method means (6 methods + the random orderings' mean) against "
          "exact's; largest |difference| of a method mean:")
    for w in WIDTHS:
        parts = []
        for m in IDS:
            def means(name):
                rows = np.array([r["search"][name]["values"][m] for r in records])
                return np.r_[np.nanmean(rows[:, :len(METHODS)], axis=0), np.nanmean(rows[:, len(METHODS):])]
            beam, exact = means(f"beam-{w}"), means("exact")
            parts.append(f"{m.split('-')[1][:4]} tau {kendalltau(beam, exact).statistic:.3f}, "
                         f"max |d mean| {np.max(np.abs(beam - exact)):.4f}")
        print(f"  width {w}: " + "; ".join(parts))
    issue = next((r for r in records if r["text"] == ISSUE_SENTENCE), None)
    if issue is not None:
        print(f"\nthe issue's sentence ({issue['n']} words), comprehensiveness, methods {', '.join(METHODS)}:")
        m = IDS[0]
        print(f"  exact bounds {fmt(issue['search']['exact']['bounds'][m])}: "
              + " / ".join(f"{v:.3f}" for v in issue["search"]["exact"]["values"][m][:len(METHODS)]))
        for w in WIDTHS:
            search = issue["search"][f"beam-{w}"]
            print(f"  width {w}: beam bounds {fmt(search['beam_only'][m])}, shared {fmt(search['bounds'][m])}: "
                  + " / ".join(f"{v:.3f}" for v in search["values"][m][:len(METHODS)])
                  + "; own bound: " + " / ".join(f"{v:.3f}" for v in old_values(search)[m][:len(METHODS)]))


def fmt(pair) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


if __name__ == "__main__":
    raise SystemExit(main())
