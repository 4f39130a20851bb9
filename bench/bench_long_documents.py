#!/usr/bin/env python
"""Long documents: seconds and peak memory per method for 64 ... 4,096-word documents, read in windows.

Documents are real text: ERASER review sentences (``eraser-movies-docs:train``) joined until N words. Per size:
the windowed forward (the document's prediction), saliency and integrated gradients (per window, blended;
``--ig-steps`` path points), leave-one-out by word (sizes up to ``--loo-max`` words; window reuse) and by sentence.
Peak memory: the process's resident memory sampled every 5 ms during the call, above its value at the start.
Fitted log-log exponent of seconds against words over the sizes that need more than one window (target <= 1.1).

Leave-one-out's forward floor on a ``--floor-words``-word document: a plain batched forward of the window rows
leave-one-out with reuse sends to the model (each window once per word it holds, plus once unperturbed), the
unperturbed windows repeated; ratio = LOO / floor (target <= 1.3).

Coarse to fine on ``eraser-movies-docs:test`` (``--docs`` documents): leave-one-out under the default sentence rule
(``explainers.coarse_rules.DEFAULT_RULE``; every rule is scored by ``bench/bench_coarse_to_fine.py``) against
word-level leave-one-out: share of its time (target <= 15 %) and precision of the top-10 words (>= 0.8).

    EXWB_THREADS=1 python bench/bench_long_documents.py                  # default model, every size
    EXWB_THREADS=1 python bench/bench_long_documents.py --quick          # 64-1,024 words, 2 documents
    EXWB_THREADS=1 python bench/bench_long_documents.py --clock cpu      # CPU seconds: for a shared machine
Figures measured on a machine shared with other work must say so (docs/benchmarks.md).
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import numpy as np  # noqa: E402

from bench.machine import describe  # noqa: E402
from corpora import load_dataset  # noqa: E402
from explainers import create  # noqa: E402
from explainers.coarse_to_fine import DEFAULT_RULE, coarse_to_fine, top_precision  # noqa: E402
from models import load_classifier, metered  # noqa: E402
from models.granularity import by_units  # noqa: E402
from models.windows import encode_document, is_document  # noqa: E402

SIZES = (64, 256, 512, 1024, 2048, 4096)
PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * PAGE


class PeakMemory:
    """Peak resident memory above the start, sampled every 5 ms in a thread."""

    def __enter__(self):
        self.start = self.peak = rss()
        self.running = True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self):
        while self.running:
            self.peak = max(self.peak, rss())
            time.sleep(0.005)

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, rss())

    @property
    def megabytes(self) -> float:
        return (self.peak - self.start) / 2**20


def text_of(words: int) -> str:
    pool = [w for doc in load_dataset("eraser-movies-docs:train") for w in doc.text.split()]
    return " ".join(pool[:words])


CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = CLOCKS["wall"]  # --clock cpu: the process's CPU seconds, which other processes' load barely moves


def timed(work):
    with PeakMemory() as memory, metered() as meter:
        started = CLOCK()
        result = work()
        seconds = CLOCK() - started
    return seconds, memory.megabytes, meter.forward_passes, result


def exponent(sizes, seconds) -> float:
    return float(np.polyfit(np.log(sizes), np.log(seconds), 1)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--loo-max", type=int, default=1024)
    parser.add_argument("--ig-steps", type=int, default=8)
    parser.add_argument("--floor-words", type=int, default=1000)
    parser.add_argument("--docs", type=int, default=5)
    parser.add_argument("--parts", default="sizes,floor,coarse",
                        help="which parts run: sizes (the table and exponents), floor, coarse (coarse to fine)")
    parser.add_argument("--doc-words-min", type=int, default=0,
                        help="coarse to fine on test documents of at least this many words")
    parser.add_argument("--doc-words-max", type=int, default=None,
                        help="coarse to fine on the first --docs test documents of at most this many words")
    parser.add_argument("--clock", choices=tuple(CLOCKS), default="wall",
                        help="wall: seconds on the clock; cpu: this process's CPU seconds (with EXWB_THREADS=1 a "
                             "shared machine's load barely moves them)")
    args = parser.parse_args()
    global CLOCK
    CLOCK = CLOCKS[args.clock]
    sizes = SIZES[:4] if args.quick else SIZES
    docs = 2 if args.quick else args.docs
    classifier = load_classifier(args.model)
    print(f"machine: {describe()}; clock {args.clock}", flush=True)
    print(f"model {classifier.name}, window {classifier.max_length} tokens, 25 % overlap, mean of windows")
    classifier.logits_of(classifier.encode("warm up"))
    methods = {"forward": None, "saliency": create("saliency"),
               "integrated_gradients": create("integrated_gradients", n_steps=args.ig_steps),
               "leave_one_out (word)": create("leave_one_out", operator="pad"),
               "leave_one_out (sentence)": create("leave_one_out", operator="pad")}
    table: dict[str, list] = {name: [] for name in methods}
    parts = set(args.parts.split(","))
    if "sizes" not in parts:
        sizes = ()
    print(f"{'method':28s}{'words':>7s}{'windows':>8s}{'seconds':>9s}{'peak MB':>9s}{'forwards':>9s}")
    for size in sizes:
        document = encode_document(classifier, text_of(size))
        windows = len(document.windows) if is_document(document) else 1
        for name, method in methods.items():
            if name == "leave_one_out (word)" and size > args.loo_max:
                continue
            if method is None:
                work = (lambda: document.document_logits(classifier)) if is_document(document) else \
                    (lambda: classifier.predict_logits([document]))
            elif "sentence" in name:
                units = by_units(document, "sentence")
                work = lambda m=method, u=units: m.explain(classifier, u, target=1)  # noqa: E731
            else:
                work = lambda m=method: m.explain(classifier, document, target=1)  # noqa: E731
            seconds, megabytes, forwards, _ = timed(work)
            table[name].append((size, seconds))
            print(f"{name:28s}{size:7d}{windows:8d}{seconds:9.3f}{megabytes:9.1f}{forwards:9d}", flush=True)
    print("\nfitted log-log exponent of seconds vs words (sizes > one window; target <= 1.1):")
    for name, points in table.items():
        several = [(s, t) for s, t in points if s >= 512]
        if len(several) >= 2:
            print(f"  {name:28s} {exponent(*zip(*several)):.2f}  (all sizes: {exponent(*zip(*points)):.2f})")

    loo = create("leave_one_out", operator="pad")
    if "floor" in parts:
        floor_ratio(classifier, loo, args.floor_words)
    if "coarse" in parts:
        coarse_versus_word(classifier, loo, docs, args.doc_words_max, args.doc_words_min)
    return 0


def floor_ratio(classifier, loo, words: int) -> None:
    document = encode_document(classifier, text_of(words))
    seconds, _, forwards, _ = timed(lambda: loo.explain(classifier, document, target=1))
    # the floor: each window as many times as leave-one-out ran it (once per word it holds, once unperturbed)
    windows = [(w.encoding, len(w.words) + 1) for w in document.windows] if is_document(document) else \
        [(document, document.n_words + 1)]
    repeated = [encoding for encoding, times in windows for _ in range(times)]
    floor, _, floor_forwards, _ = timed(lambda: classifier.predict_logits(repeated))
    print(f"\nleave-one-out on {words} words ({len(windows)} windows): {seconds:.2f} s, {forwards} window rows; "
          f"forward floor ({floor_forwards} rows) {floor:.2f} s; ratio {seconds / floor:.2f} (target <= 1.3)",
          flush=True)


def coarse_versus_word(classifier, loo, docs: int, words_max: int | None, words_min: int = 0) -> None:
    print(f"\ncoarse to fine (rule {DEFAULT_RULE}) vs word-level leave-one-out on eraser-movies-docs:test, {docs} docs "
          f"(every rule: bench/bench_coarse_to_fine.py):")
    shares, precisions = [], []
    chosen = [e for e in load_dataset("eraser-movies-docs:test")
              if (words_max is None or len(e.text.split()) <= words_max) and len(e.text.split()) >= words_min][:docs]
    for example in chosen:
        encoding = encode_document(classifier, example.text)
        target = int(np.argmax(classifier.logits_of(encoding)))
        full_seconds, _, _, full = timed(lambda: loo.explain(classifier, encoding, target=target))
        fine_seconds, _, _, result = timed(lambda: coarse_to_fine(loo, classifier, encoding, target))  # the default rule
        precision = top_precision(np.where(result.explained, result.word_scores, -np.inf), full.word_scores)
        shares.append(fine_seconds / full_seconds)
        precisions.append(precision)
        print(f"  {example.id}: {encoding.n_words} words, word LOO {full_seconds:.2f} s, coarse to fine "
              f"{fine_seconds:.2f} s ({shares[-1]:.1%}), top-10 precision {precision:.2f}", flush=True)
    print(f"  mean time share {np.mean(shares):.1%} (target <= 15 %), mean top-10 precision {np.mean(precisions):.2f} "
          f"(target >= 0.8)")


if __name__ == "__main__":
    sys.exit(main())
