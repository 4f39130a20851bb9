#!/usr/bin/env python
"""Benchmark of the mask-learning explainers (issue 14): MaRC (paper 002) and AML (paper 004).

On SST-2 dev sentences with the ``default-quick`` model (``--model`` to change):
- MaRC: seconds per sentence, the optimization steps taken (early stop vs the 900-step cap), and the floor: the
  same number of bare forward + backward passes (a batch of x~ and x~c through the classifier from embeddings,
  gradients to the input), measured in the same run; ratio = MaRC / floor (target <= 1.3).
- pAML: seconds per explanation and the ratio to one plain classifier forward of the sentence (target <= 3).
- fAML (5 steps): seconds per sentence (target <= 2 s on the CPU).
AML needs its attribution model: ``python cli.py prepare-aml --model default-quick`` (skipped, with a note, if absent).

    python bench/bench_mask_learning.py                 # 5 sentences
    python bench/bench_mask_learning.py --count 2       # seconds
    EXWB_THREADS=1 ... on a shared machine (report figures as such)
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import torch  # noqa: E402

from corpora import load_dataset  # noqa: E402
from corpora.records import split_words  # noqa: E402
from explainers import create  # noqa: E402
from explainers.mask_learning.aml_store import AMLNotPrepared  # noqa: E402
from models import load_classifier, metered  # noqa: E402


def sentences(count: int, words: tuple[int, int] = (8, 30)) -> list[str]:
    chosen = [e.text for e in load_dataset("sst2:dev") if words[0] <= len(split_words(e.text)) <= words[1]]
    return chosen[:count]


def bare_passes(classifier, encoding, steps: int, copies: int = 2) -> float:
    """``steps`` forward + backward passes of ``copies`` copies of the input from its word embeddings."""
    tensors = classifier.tensors(encoding)
    embeddings = classifier.word_embeddings(tensors["input_ids"]).detach().expand(copies, -1, -1).contiguous()
    mask = tensors["attention_mask"].expand(copies, -1)
    types = tensors.get("token_type_ids")
    started = time.perf_counter()
    for _ in range(steps):
        x = embeddings.clone().requires_grad_(True)
        logits = classifier.forward_embeds(x, mask, types)
        torch.log_softmax(logits, -1)[:, 0].sum().backward()
    return time.perf_counter() - started


def forward_seconds(classifier, encoding, repeats: int = 3) -> float:
    """Mean seconds of one plain classifier forward of the input (timed like the single pAML call it is
    compared with)."""
    started = time.perf_counter()
    for _ in range(repeats):
        classifier.predict_logits([encoding])
    return (time.perf_counter() - started) / repeats


def bench_marc(classifier, texts: list[str]) -> dict:
    rows = []
    for text in texts:
        encoding = classifier.encode(text)
        with metered() as meter:
            explanation = create("marc", preset="paper-002").explain(classifier, encoding)
        details = explanation.provenance["details"]
        floor = bare_passes(classifier, encoding, details["steps"])
        rows.append({"words": encoding.n_words, "seconds": round(meter.seconds, 3), "steps": details["steps"],
                     "stop": details["stop_reason"], "bare_seconds": round(floor, 3),
                     "ratio": round(meter.seconds / floor, 3), "mean_mask": details["mean_mask"]})
    return {"rows": rows, "seconds_per_sentence": statistics.mean(r["seconds"] for r in rows),
            "median_steps": statistics.median(r["steps"] for r in rows),
            "mean_ratio": statistics.mean(r["ratio"] for r in rows)}


def bench_aml(classifier, texts: list[str]) -> dict:
    paml, forward, faml = [], [], []
    for text in texts:
        encoding = classifier.encode(text)  # never classified yet: pAML pays its one classifier forward (y_v)
        started = time.perf_counter()
        create("aml", preset="pAML").explain(classifier, encoding)
        paml.append(time.perf_counter() - started)
        forward.append(forward_seconds(classifier, encoding))
        fresh = classifier.encode(text + " .")
        started = time.perf_counter()
        create("aml", preset="fAML").explain(classifier, fresh)
        faml.append(time.perf_counter() - started)
    return {"paml_seconds": statistics.mean(paml), "paml_ratio_to_forward": sum(paml) / sum(forward),
            "faml_seconds": statistics.mean(faml)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--count", type=int, default=5)
    parser.add_argument("--only", choices=("marc", "aml"), default=None, help="run one part only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    classifier = load_classifier(args.model)
    texts = sentences(args.count)
    report = {"model": args.model, "threads": torch.get_num_threads(), "sentences": len(texts)}
    if args.only != "aml":
        report["marc"] = bench_marc(classifier, texts)
    if args.only != "marc":
        try:
            create("aml").explain(classifier, classifier.encode("a warm-up sentence"))  # load G once (not timed)
            report["aml"] = bench_aml(classifier, texts)
        except AMLNotPrepared as error:
            report["aml"] = {"skipped": str(error)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"{args.model}, {len(texts)} SST-2 dev sentences, {report['threads']} torch thread(s)")
    marc = report.get("marc", {"rows": []})
    if "marc" in report:
        print(f"MaRC (paper-002): {marc['seconds_per_sentence']:.2f} s/sentence, median {marc['median_steps']} steps, "
              f"{marc['mean_ratio']:.2f}x the same number of bare forward+backward passes (target <= 1.3)")
    for row in marc["rows"]:
        print(f"  {row['words']:>3} words  {row['seconds']:>7.2f} s  {row['steps']:>4} steps ({row['stop']})  "
              f"bare {row['bare_seconds']:.2f} s  ratio {row['ratio']:.2f}  mean mask {row['mean_mask']:.2f}")
    aml = report.get("aml", {"skipped": "not run (--only marc)"})
    if "skipped" in aml:
        print(f"AML skipped: {aml['skipped']}")
    else:
        print(f"pAML: {aml['paml_seconds'] * 1000:.1f} ms/sentence = {aml['paml_ratio_to_forward']:.2f}x one "
              f"classifier forward (target <= 3); fAML (5 steps): {aml['faml_seconds']:.2f} s/sentence (target <= 2 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
