#!/usr/bin/env python
"""The attack over a document's windows against the plain attack on each of its windows alone.

For the first ``--docs`` ``eraser-movies-docs:test`` documents longer than the model's window (read whole in
512-token windows, mean rule): the seconds of ``--steps`` attack steps on the whole document (one pass per step when
its windows fit in one batch, the default on this machine; ``--two-pass`` also times the two-pass path, one window
per batch), and the seconds of the same steps of the plain attack on each window's encoding alone, summed over the
windows. The early stop is off (tolerance 0) so every run takes exactly ``--steps`` steps. Seconds measured at
EXWB_THREADS=1 on a machine that may be shared: say so with the figures.

    EXWB_THREADS=1 nice -n 5 python bench/bench_document_attack.py --docs 3 --steps 5 --two-pass
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


def timed(work) -> tuple[float, object]:
    started = time.perf_counter()
    out = work()
    return time.perf_counter() - started, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="default")
    parser.add_argument("--docs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--method", default="input_x_gradient")
    parser.add_argument("--two-pass", action="store_true", help="also time one window per batch (two passes a step)")
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
    header = "| document | words | windows | whole document: s | windows alone: s (sum) | ratio |"
    rows = []
    for name, document in documents:
        whole, result = timed(lambda: attack(classifier, document, args.method, config))  # noqa: B023
        alone = sum(timed(lambda: attack(classifier, w.encoding, args.method, config))[0]  # noqa: B023
                    for w in document.windows)
        row = (f"| {name} | {document.n_words} | {len(document.windows)} | {whole:.1f} | {alone:.1f} | "
               f"{whole / alone:.2f} |")
        if args.two_pass:
            def two_pass():
                with eager_attention(classifier.model):
                    state = DocumentState.prepare_document(classifier, document, args.method, config, 0,  # noqa: B023
                                                           per_batch=1)
                    return optimize_document(state, args.method, config, None, None)
            seconds, _ = timed(two_pass)
            row += f" {seconds:.1f} | {seconds / alone:.2f} |"
        rows.append(row)
        print(row, f"(batches {result.windows['window_batches']})", flush=True)
    if args.two_pass:
        header += " two passes (1 window per batch): s | ratio |"
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
