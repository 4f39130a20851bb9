#!/usr/bin/env python
"""The attack over a document's windows against the plain attack on each of its windows alone.

For the first ``--docs`` ``eraser-movies-docs:test`` documents longer than the model's window (read whole in
512-token windows, mean rule), the seconds of ``--steps`` attack steps:
- the whole document as the attack runs it (``attack``: one pass per step when every window's graph fits the memory
  budget, one window per call on a CPU);
- the plain attack on each window's encoding alone, summed over the windows (the floor: the same passes, nothing
  shared);
- with ``--variants``: two passes a step (one window per call; the path of a document whose windows' graphs do not
  fit at once), and one pass with every window in one padded call.
The early stop is off (tolerance 0) so every run takes exactly ``--steps`` steps. Seconds measured at
EXWB_THREADS=1 on a machine that may be shared: say so with the figures.

    EXWB_THREADS=1 nice -n 5 python bench/bench_document_attack.py --docs 3 --steps 5 --variants
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

from bench.machine import describe  # noqa: E402
from corpora import load_dataset  # noqa: E402
from evaluation.adversarial.attack import attack  # noqa: E402
from evaluation.adversarial.config import config_for  # noqa: E402
from evaluation.adversarial.documents import DocumentState, optimize_document  # noqa: E402
from models import load_classifier  # noqa: E402
from models.attention_kernel import eager_attention  # noqa: E402
from models.documents import read_input  # noqa: E402
from models.windows import DocumentEncoding  # noqa: E402


def seconds_of(work) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--docs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--method", default="input_x_gradient")
    parser.add_argument("--variants", action="store_true", help="also two passes, and one padded call")
    args = parser.parse_args()
    classifier = load_classifier(args.model)
    config = config_for("paper-003", steps=args.steps, tolerance=0.0)
    documents = []
    for example in load_dataset("eraser-movies-docs:test"):
        encoding = read_input(classifier, example.text)
        if isinstance(encoding, DocumentEncoding):
            documents.append((example.id, encoding))
        if len(documents) == args.docs:
            break
    print(describe())
    print(f"model {args.model}, {args.method}, {args.steps} steps, window {classifier.max_length} tokens")

    def variant(document, per_batch: int, one_pass: bool):
        def run():
            with eager_attention(classifier.model):
                state = DocumentState.prepare_document(classifier, document, args.method, config, 0,
                                                       per_batch=per_batch, one_pass=one_pass)
                optimize_document(state, args.method, config, None, None)
        return run

    header = "| document | words | windows | whole document: s | windows alone: s (sum) | ratio |"
    if args.variants:
        header += " two passes: s (ratio) | one padded call: s (ratio) |"
    rows = []
    for name, document in documents:
        windows = len(document.windows)
        started = time.perf_counter()
        result = attack(classifier, document, args.method, config)
        whole = time.perf_counter() - started
        alone = sum(seconds_of(lambda: attack(classifier, w.encoding, args.method, config))  # noqa: B023
                    for w in document.windows)
        row = f"| {name} | {document.n_words} | {windows} | {whole:.1f} | {alone:.1f} | {whole / alone:.2f} |"
        if args.variants:
            for per_batch, one_pass in ((1, False), (windows, True)):
                seconds = seconds_of(variant(document, per_batch, one_pass))
                row += f" {seconds:.1f} ({seconds / alone:.2f}) |"
        rows.append(row)
        print(row, f"({result.windows['window_calls']} calls, one pass {result.windows['one_pass']})", flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
