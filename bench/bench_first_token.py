#!/usr/bin/env python
"""The last encoder layer for [CLS] only: FLOPs counted exactly, time A/B in one process, max |dlogit|.

For each prepared model (default = MiniLM-L6, minilm-l4, minilm-l2):
- FLOPs of one forward pass of a 64 x 30-token batch, full last layer vs first-token last layer: the linear layers
  counted by torch's FlopCounterMode (exact: 2 x m x n x k per matmul), the attention products (QK^T and AV, which
  the counter does not see inside the CPU's fused SDPA kernel) added by their exact formula
  4 x heads x head size x queries x keys per row and layer;
- time, the two classifiers around the same model object, interleaved (full, first-token, full, ...), best of n,
  wall and CPU (``time.process_time``) seconds: ``predict_logits`` of the 64 x 30 batch, and one integrated-gradients
  pass (50 path points of a 30-token input through ``forward_embeds``, forward + backward);
- max |dlogit| between the two on the batch, and max |d grad| on the IG pass.

    EXWB_THREADS=1 python bench/bench_first_token.py             # the three models, best of 5
    python bench/bench_first_token.py --models default --rounds 3
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import settings  # noqa: E402

settings.prepare_runtime()

import torch  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from models import TextClassifier, load_classifier  # noqa: E402
from models.classifier import TokenBatch  # noqa: E402

ROWS, TOKENS, STEPS = 64, 30, 50


def full_twin(classifier: TextClassifier) -> TextClassifier:
    """The same model object with the full last layer (EXWB_FULL_LAST_LAYER=1 is read when a classifier is built)."""
    os.environ["EXWB_FULL_LAST_LAYER"] = "1"
    try:
        return TextClassifier(classifier.model, classifier.tokenizer, name=f"{classifier.name} [full]",
                              device=classifier.device)
    finally:
        del os.environ["EXWB_FULL_LAST_LAYER"]


def token_batch(classifier: TextClassifier) -> TokenBatch:
    """ROWS rows of TOKENS ids: [CLS], ordinary tokens drawn with a fixed seed, [SEP]."""
    generator = torch.Generator().manual_seed(0)
    specials = set(classifier.tokenizer.all_special_ids)
    ordinary = torch.tensor([i for i in range(1000, 20000) if i not in specials])
    body = ordinary[torch.randint(len(ordinary), (ROWS, TOKENS - 2), generator=generator)]
    cls, sep = classifier.tokenizer.cls_token_id, classifier.tokenizer.sep_token_id
    return TokenBatch(input_ids=[[cls, *row.tolist(), sep] for row in body])


def attention_flops(classifier: TextClassifier, first_token: bool) -> int:
    """QK^T and AV of every layer: 4 x hidden x queries x keys per row (hidden = heads x head size)."""
    config = classifier.model.config
    per_layer_full = 4 * config.hidden_size * TOKENS * TOKENS
    last = 4 * config.hidden_size * 1 * TOKENS if first_token else per_layer_full
    return ROWS * ((config.num_hidden_layers - 1) * per_layer_full + last)


def forward_flops(classifier: TextClassifier, batch: TokenBatch) -> int:
    with FlopCounterMode(display=False) as counter:
        classifier.predict_logits(batch)
    counted = counter.get_flop_counts()["Global"]
    # the attention products run in SDPA, which the counter does not see on a CPU (bmm here: a linear layer on a
    # strided (rows, 1, hidden) slice)
    assert not any("attention" in str(op) for op in counted), counted
    return counter.get_total_flops() + attention_flops(classifier, classifier.first_token.enabled)


def timed(function) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def interleaved(full, fast, rounds: int):
    full(), fast()  # first-call costs
    a, b = [], []
    for _ in range(rounds):
        a.append(timed(full))
        b.append(timed(fast))
    return min(a), min(b)


def ig_pass(classifier: TextClassifier, embeds: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """One integrated-gradients pass: STEPS scaled copies of the input, forward + backward of the target logit."""
    alphas = torch.linspace(1.0 / STEPS, 1.0, STEPS).view(-1, 1, 1)
    path = (alphas * embeds).requires_grad_(True)
    logits = classifier.forward_embeds(path, mask)
    return torch.autograd.grad(logits[:, 1].sum(), path)[0]


def report(name: str, rounds: int) -> list[str]:
    fast = load_classifier(name, device="cpu")
    full = full_twin(fast)
    assert fast.first_token.enabled, fast.first_token.note
    batch = token_batch(fast)
    flops_full, flops_fast = forward_flops(full, batch), forward_flops(fast, batch)
    dlogit = float(abs(full.predict_logits(batch) - fast.predict_logits(batch)).max())
    (fw, fc), (sw, sc) = interleaved(lambda: full.predict_logits(batch), lambda: fast.predict_logits(batch), rounds)
    ids = torch.tensor([batch.input_ids[0]])
    embeds, mask = fast.word_embeddings(ids).detach(), torch.ones_like(ids)
    dgrad = float((ig_pass(full, embeds, mask) - ig_pass(fast, embeds, mask)).abs().max())
    (gw, gc), (hw, hc) = interleaved(lambda: ig_pass(full, embeds, mask), lambda: ig_pass(fast, embeds, mask), rounds)
    config = fast.model.config
    return [f"| {name} ({config.num_hidden_layers} layers) | {flops_full / 1e9:.2f} | {flops_fast / 1e9:.2f} | "
            f"{1 - flops_fast / flops_full:.1%} | {fw:.3f} / {sw:.3f} ({sw / fw:.2f}x) | {fc:.3f} / {sc:.3f} "
            f"({sc / fc:.2f}x) | {gw:.3f} / {hw:.3f} ({hw / gw:.2f}x) | {gc:.3f} / {hc:.3f} ({hc / gc:.2f}x) | "
            f"{dlogit:.1e} | {dgrad:.1e} |"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="default,minilm-l4,minilm-l2")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"load before: {Path('/proc/loadavg').read_text().strip()}; torch threads {torch.get_num_threads()}")
    print(f"| model | GFLOP full | GFLOP first-token | saved | forward wall s full / first ({ROWS}x{TOKENS}) | "
          f"forward CPU s | IG pass wall s ({STEPS} steps, fwd + bwd) | IG pass CPU s | max abs dlogit | "
          f"max abs dgrad |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name in args.models.split(","):
        for line in report(name, args.rounds):
            print(line, flush=True)
    print(f"load after: {Path('/proc/loadavg').read_text().strip()}")


if __name__ == "__main__":
    main()
