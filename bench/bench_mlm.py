#!/usr/bin/env python
"""Benchmark of Input Marginalization: seconds per SST-2 dev sentence, batched, with its forward passes.

Per sentence (``default-quick`` classifier unless --model, the prepared offline masked LM unless --mlm):
- IM-top10 as implemented: one batched masked-LM call (n_words sequences) + one batched classifier call
  (1 + 10 n_words sequences); seconds, classifier forward passes, masked-LM passes, batches;
- baseline measured in the same run: the same counterfactuals classified one forward at a time (what an
  unbatched implementation costs); ratio = one-at-a-time / batched;
- reference: leave-one-out (delete) on the same sentence (n_words + 1 passes).
Also the offline masked LM's held-out accuracy from its manifest.

    python bench/bench_mlm.py             # 8 sentences of 12-30 words
    python bench/bench_mlm.py --quick     # 2 sentences, seconds
    EXWB_THREADS=1 nice ... on a shared machine (report figures as such)
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

from corpora import load_dataset  # noqa: E402
from corpora.records import split_words  # noqa: E402
from explainers import create  # noqa: E402
from explainers.methods.input_marginalization import InputMarginalization  # noqa: E402
from models import UserFacingError, load_classifier, metered  # noqa: E402
from models.mlm import load_filler  # noqa: E402


def sentences(count: int, words: tuple[int, int] = (12, 30)) -> list[str]:
    chosen = [e.text for e in load_dataset("sst2:dev") if words[0] <= len(split_words(e.text)) <= words[1]]
    return chosen[:count]


def one_at_a_time(classifier, encoding, explanation) -> float:
    """Seconds to classify IM's counterfactuals one forward pass each (the unbatched baseline)."""
    words = list(encoding.words)
    texts = [" ".join(words)]
    for i, row in enumerate(explanation.provenance["details"]["words"]):
        texts += [" ".join(words[:i] + [w] + words[i + 1:]) for w, _ in row["candidates"]]
    started = time.perf_counter()
    for text in texts:
        classifier.predict_logits(classifier.tokenize_texts([text]))
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="2 sentences")
    parser.add_argument("--model", default="default-quick")
    parser.add_argument("--mlm", default="mlm", help="masked LM: mlm (offline stand-in), a folder or a hub id")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    try:
        classifier = load_classifier(args.model)
        filler = load_filler(args.mlm)
    except UserFacingError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    texts = sentences(2 if args.quick else 8)
    rows = []
    for text in texts:
        encoding = classifier.encode(text)
        explainer = InputMarginalization(preset="paper-000-top10", filler=filler)
        target = int(np.argmax(classifier.predict_proba([encoding])[0]))
        mlm_before = filler.forward_passes
        with metered() as meter:
            explanation = explainer.explain(classifier, encoding, target)
        im_seconds = meter.seconds
        unbatched = one_at_a_time(classifier, encoding, explanation)
        loo = create("leave_one_out", preset="paper-000-empty")
        with metered() as loo_meter:
            loo.explain(classifier, encoding, target)
        rows.append({"words": encoding.n_words, "tokens": encoding.n_tokens, "im_seconds": im_seconds,
                     "forward_passes": meter.forward_passes, "batches": meter.batches,
                     "mlm_passes": filler.forward_passes - mlm_before, "unbatched_seconds": unbatched,
                     "ratio_unbatched_over_batched": unbatched / im_seconds, "loo_seconds": loo_meter.seconds,
                     "loo_forward_passes": loo_meter.forward_passes})
    summary = {
        "model": classifier.name, "masked_lm": filler.describe(), "sentences": len(rows),
        "mean_words": statistics.mean(r["words"] for r in rows),
        "im_seconds_per_sentence": statistics.mean(r["im_seconds"] for r in rows),
        "im_forward_passes_per_sentence": statistics.mean(r["forward_passes"] for r in rows),
        "im_mlm_passes_per_sentence": statistics.mean(r["mlm_passes"] for r in rows),
        "unbatched_seconds_per_sentence": statistics.mean(r["unbatched_seconds"] for r in rows),
        "ratio_unbatched_over_batched": statistics.mean(r["ratio_unbatched_over_batched"] for r in rows),
        "loo_seconds_per_sentence": statistics.mean(r["loo_seconds"] for r in rows),
        "ratio_im_over_loo": statistics.mean(r["im_seconds"] / r["loo_seconds"] for r in rows),
        "threads": settings.torch_threads(), "rows": rows,
    }
    if args.json:
        print(json.dumps(summary, indent=2, default=str))
        return 0
    print(f"model {classifier.name}, masked LM {filler.name} ({filler.fingerprint}), {len(rows)} SST-2 dev sentences, "
          f"mean {summary['mean_words']:.1f} words, torch threads {summary['threads']}")
    for name, result in (filler.describe().get("evaluation") or {}).items():
        print(f"masked LM held-out {name}: top-1 {result['top1_accuracy']:.1%}, top-10 {result['top10_accuracy']:.1%}")
    print(f"IM-top10 (batched):      {summary['im_seconds_per_sentence']:.3f} s/sentence, "
          f"{summary['im_forward_passes_per_sentence']:.0f} classifier + {summary['im_mlm_passes_per_sentence']:.0f} "
          f"masked-LM forward passes")
    print(f"one forward at a time:   {summary['unbatched_seconds_per_sentence']:.3f} s/sentence "
          f"(ratio {summary['ratio_unbatched_over_batched']:.1f}x slower than batched)")
    print(f"LOOempty (reference):    {summary['loo_seconds_per_sentence']:.3f} s/sentence "
          f"(IM / LOO = {summary['ratio_im_over_loo']:.1f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
