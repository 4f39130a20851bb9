#!/usr/bin/env python
"""Benchmark of the mask-learning explainers: MaRC (paper 002) and AML (paper 004).

On SST-2 dev sentences with the ``default-quick`` model (``--model`` to change):
- MaRC: seconds per sentence, the optimization steps taken (early stop vs the 900-step cap), and the floor: the
  same number of bare forward + backward passes (a batch of x~ and x~c through the classifier from embeddings,
  gradients to the input), measured in the same run; ratio = MaRC / floor (target <= 1.3).
- pAML: seconds per explanation and the ratio to one plain classifier forward of the sentence (target <= 3).
- fAML (5 steps): seconds per sentence (target <= 2 s on the CPU), process CPU seconds beside them (what a loaded
  machine distorts least), and the classifier's passes per sentence (exact; G's own passes are not metered).
- the SST-2 dev table (papers 002 Table 1, 004 Tables 1-2): comprehensiveness and sufficiency (ERASER AOPC, words
  deleted) of MaRC and fAML next to Integrated Gradients, LIME and leave-one-out, and the random band (10 random
  orderings per sentence: the lowest and highest of their dataset means). MaRC's and fAML's maps are the ones
  timed above.
AML needs its attribution model: ``python cli.py prepare-aml --model default-quick`` (skipped, with a note, if absent).

    python bench/bench_mask_learning.py                 # 8 sentences: under 10 min on the idle 2-core CPU (estimate:
                                                        # MaRC's 900-step cap dominates, about 1 min a sentence)
    python bench/bench_mask_learning.py --quick         # 2 sentences (a shared machine: about 8 min each there)
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

import numpy as np  # noqa: E402
import torch  # noqa: E402

from corpora import load_dataset  # noqa: E402
from corpora.records import split_words  # noqa: E402
from evaluation.faithfulness.presets import BY_ID  # noqa: E402
from evaluation.faithfulness.random_band import methods_and_random  # noqa: E402
from explainers import create  # noqa: E402
from explainers.mask_learning.aml_store import AMLNotPrepared  # noqa: E402
from models import load_classifier, metered  # noqa: E402

COUNT, QUICK_COUNT = 8, 2
TABLE_METRICS = ("comprehensiveness-eraser", "sufficiency-eraser")
BASELINES = {"integrated_gradients": "Integrated Gradients", "lime": "LIME", "leave_one_out": "Leave-one-out"}
RANDOM_ORDERINGS = 10


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


def bench_marc(classifier, texts: list[str], maps: dict) -> dict:
    rows = []
    for text in texts:
        encoding = classifier.encode(text)
        with metered() as meter:
            explanation = create("marc", preset="paper-002").explain(classifier, encoding)
        details = explanation.provenance["details"]
        maps.setdefault(text, {})["MaRC"] = explanation.word_scores
        floor = bare_passes(classifier, encoding, details["steps"])
        rows.append({"words": encoding.n_words, "seconds": round(meter.seconds, 3), "steps": details["steps"],
                     "stop": details["stop_reason"], "bare_seconds": round(floor, 3),
                     "ratio": round(meter.seconds / floor, 3), "mean_mask": details["mean_mask"]})
    return {"rows": rows, "seconds_per_sentence": statistics.mean(r["seconds"] for r in rows),
            "median_steps": statistics.median(r["steps"] for r in rows),
            "mean_ratio": statistics.mean(r["ratio"] for r in rows)}


def bench_aml(classifier, texts: list[str], maps: dict) -> dict:
    paml, forward, faml, faml_cpu, passes = [], [], [], [], []
    for text in texts:
        encoding = classifier.encode(text)  # never classified yet: pAML pays its one classifier forward (y_v)
        started = time.perf_counter()
        create("aml", preset="pAML").explain(classifier, encoding)
        paml.append(time.perf_counter() - started)
        forward.append(forward_seconds(classifier, encoding))
        fresh = classifier.encode(text + " .")  # not classified yet: fAML, too, pays its classifier forward
        started, cpu_started = time.perf_counter(), time.process_time()
        with metered() as meter:
            create("aml", preset="fAML").explain(classifier, fresh)
        faml.append(time.perf_counter() - started)
        faml_cpu.append(time.process_time() - cpu_started)
        passes.append((meter.forward_passes, meter.backward_passes))  # the classifier's (G's are not metered)
        maps.setdefault(text, {})["fAML"] = create("aml", preset="fAML").explain(classifier, encoding).word_scores
    return {"paml_seconds": statistics.mean(paml), "paml_ratio_to_forward": sum(paml) / sum(forward),
            "faml_seconds": statistics.mean(faml), "faml_cpu_seconds": statistics.mean(faml_cpu),
            "faml_classifier_passes": [statistics.mean(p[0] for p in passes), statistics.mean(p[1] for p in passes)]}


def dev_table(classifier, texts: list[str], maps: dict) -> dict:
    """Mean comprehensiveness / sufficiency (ERASER AOPC) per method and the random band, over the sentences."""
    metrics = [BY_ID[m] for m in TABLE_METRICS]
    values: dict[str, dict[str, list[float]]] = {}
    random_means = {m: [] for m in TABLE_METRICS}  # per sentence: the value of each of the 10 orderings
    for text in texts:
        encoding = classifier.encode(text)
        scores = dict(maps.get(text, {}))
        for method, label in BASELINES.items():
            scores[label] = create(method).explain(classifier, encoding).word_scores
        results, band = methods_and_random(classifier, encoding, metrics, scores, n=RANDOM_ORDERINGS, seed=0)
        for label, result in results.items():
            for metric in TABLE_METRICS:
                values.setdefault(label, {}).setdefault(metric, []).append(result.values[metric])
        for metric in TABLE_METRICS:
            random_means[metric].append(band.values[metric])
    table = {label: {m: float(np.mean(v)) for m, v in per.items()} for label, per in values.items()}
    orderings = {m: np.mean(np.array(random_means[m]), axis=0) for m in TABLE_METRICS}  # one mean per ordering
    table["random (10 orderings)"] = {m: float(np.mean(orderings[m])) for m in TABLE_METRICS}
    band = {m: [float(orderings[m].min()), float(orderings[m].max())] for m in TABLE_METRICS}
    return {"sentences": len(texts), "mean": table, "random_band": band}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--count", type=int, default=None,
                        help=f"SST-2 dev sentences (default {COUNT}; {QUICK_COUNT} with --quick)")
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_COUNT} sentences: for a shared machine")
    parser.add_argument("--only", choices=("marc", "aml"), default=None, help="run one part only (no table)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    classifier = load_classifier(args.model)
    texts = sentences(args.count or (QUICK_COUNT if args.quick else COUNT))
    report = {"model": args.model, "threads": torch.get_num_threads(), "sentences": len(texts)}
    maps: dict = {}
    started = time.perf_counter()
    if args.only != "aml":
        report["marc"] = bench_marc(classifier, texts, maps)
    if args.only != "marc":
        try:
            create("aml").explain(classifier, classifier.encode("a warm-up sentence"))  # load G once (not timed)
            report["aml"] = bench_aml(classifier, texts, maps)
        except AMLNotPrepared as error:
            report["aml"] = {"skipped": str(error)}
    if args.only is None:
        report["table"] = dev_table(classifier, texts, maps)
    report["seconds"] = round(time.perf_counter() - started, 1)
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
              f"classifier forward (target <= 3); fAML (5 steps): {aml['faml_seconds']:.2f} s/sentence, "
              f"{aml['faml_cpu_seconds']:.2f} CPU s (target <= 2 s); classifier passes per sentence: "
              f"{aml['faml_classifier_passes'][0]:.1f} forward, {aml['faml_classifier_passes'][1]:.1f} backward")
    if "table" in report:
        table = report["table"]
        print(f"SST-2 dev, {table['sentences']} sentences, ERASER AOPC (words deleted): comprehensiveness (higher is "
              f"better) / sufficiency (lower is better)")
        for label, values in table["mean"].items():
            print(f"  {label:<24} {values[TABLE_METRICS[0]]:>7.4f}  {values[TABLE_METRICS[1]]:>7.4f}")
        band = table["random_band"]
        print(f"  random band (lowest-highest of {RANDOM_ORDERINGS} orderings' means): comprehensiveness "
              f"{band[TABLE_METRICS[0]][0]:.4f}-{band[TABLE_METRICS[0]][1]:.4f}, sufficiency "
              f"{band[TABLE_METRICS[1]][0]:.4f}-{band[TABLE_METRICS[1]][1]:.4f}")
    print(f"total {report['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
