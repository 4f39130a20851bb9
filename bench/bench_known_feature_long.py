#!/usr/bin/env python
"""The known-feature check at document scale: which cheap methods find one planted word among ~500, at what cost.

The document twin (``models/document_twin.py``: the short known-feature twin fine-tuned on ``known-feature-long``
documents read in windows) explains the first ``--docs`` ``known-feature-long:dev`` documents, each read whole in
512-token windows (mean rule). Per method: the planted word's mean rank % (rank / words; paper 003's "Mean Rank %",
lower is better), precision@1, and seconds per document; the random ranking's expectation and its 95 % band for
the same documents (10,000 seeded draws of a uniform rank per document, the mean over the documents).
Leave-one-out and occlusion cost ~1.4 window rows per word; ``--slow-docs`` limits them to the first N documents.

    EXWB_THREADS=1 python bench/bench_known_feature_long.py --docs 20 --slow-docs 5
    EXWB_THREADS=1 python bench/bench_known_feature_long.py --model short   # the short twin read in windows
Figures measured on a machine shared with other work must say so (docs/long-documents.md).
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

from bench.machine import describe  # noqa: E402
from corpora import load_dataset  # noqa: E402
from evaluation.faithfulness.known_feature import RECIPE, ground_truth_metrics, model_dir  # noqa: E402
from evaluation.statistics import bootstrap_ci  # noqa: E402
from explainers import create  # noqa: E402
from models import load_classifier  # noqa: E402
from models.document_twin import DocumentTwinRecipe, is_prepared, twin_dir  # noqa: E402
from models.documents import read_input  # noqa: E402

METHODS = {"saliency": {}, "input_x_gradient": {}, "integrated_gradients": {"n_steps": 20},
           "leave_one_out": {}, "occlusion": {}}
SLOW = ("leave_one_out", "occlusion")


def random_band(lengths: list[int], draws: int = 10_000, seed: int = 0) -> tuple[float, float, float]:
    """Mean rank % of a uniformly random ranking over these documents: expectation and the 95 % band of the mean."""
    rng = np.random.default_rng(seed)
    n = np.asarray(lengths)
    means = (rng.integers(1, n + 1, size=(draws, n.size)) / n).mean(axis=1)
    return float(((n + 1) / (2 * n)).mean()), float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="twin", help="twin (the document twin), short (the short twin) or a folder")
    parser.add_argument("--docs", type=int, default=20)
    parser.add_argument("--slow-docs", type=int, default=5, help="documents for leave-one-out and occlusion")
    parser.add_argument("--methods", default=",".join(METHODS))
    args = parser.parse_args()
    if args.model == "twin":
        recipe = DocumentTwinRecipe(source=model_dir(RECIPE).name)
        if not is_prepared(recipe):
            sys.exit("The document twin is not trained; run `python cli.py known-feature --documents --prepare`.")
        folder = str(twin_dir(recipe))
    else:
        folder = str(model_dir(RECIPE)) if args.model == "short" else args.model
    classifier = load_classifier(folder)
    documents = load_dataset("known-feature-long:dev")[:args.docs]
    print(describe())
    print(f"model {folder}; {len(documents)} known-feature-long:dev documents")
    encodings = [read_input(classifier, d.text) for d in documents]
    correct = [int(classifier.logits_of(e).argmax()) == d.label for e, d in zip(encodings, documents)]
    print(f"accuracy (mean rule) {np.mean(correct):.2%}; words median {np.median([e.n_words for e in encodings]):.0f}")
    rows = []
    for method in args.methods.split(","):
        explainer = create(method, **METHODS.get(method, {}))
        limit = args.slow_docs if method in SLOW else args.docs
        if limit <= 0:
            continue
        ranks, top1, seconds = [], [], []
        for document, encoding in zip(documents[:limit], encodings[:limit]):
            started = time.perf_counter()
            explanation = explainer.explain(classifier, encoding, None)
            seconds.append(time.perf_counter() - started)
            values = ground_truth_metrics(explanation.word_scores, document.rationale)
            ranks.append(values["known-feature.rank-fraction"])
            top1.append(values["known-feature.precision@k"])
        ci = bootstrap_ci(np.asarray(ranks))
        expected, low, high = random_band([e.n_words for e in encodings[:limit]])
        rows.append(f"| {method} {METHODS.get(method) or ''} | {limit} | {100 * ci.mean:.1f} [{100 * ci.low:.1f}, "
                    f"{100 * ci.high:.1f}] | {np.mean(top1):.2f} | {100 * expected:.1f} [{100 * low:.1f}, "
                    f"{100 * high:.1f}] | {np.mean(seconds):.2f} |")
        print(rows[-1], flush=True)
    print("| method | documents | mean rank % [95 % CI] | precision@1 | random: expected [95 % band] | s / document |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
