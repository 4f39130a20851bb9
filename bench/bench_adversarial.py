#!/usr/bin/env python
"""Benchmark: the attack on explanations (paper 003 sections 2.3, 3.5) on SST-2 dev sentences.

Target (issue 16): the attack on Gradient x Input costs little more than the passes it must make. Prints, per
sentence, the attack's seconds and steps taken, and the ratio against a baseline measured in the same run: the same
number of bare steps (one forward, the explanation's gradient with create_graph, one backward through it, an Adam
step) written directly in torch on the same input. Integrated Gradients' cost is stated per step (its path has
``ig_steps`` points, each with the same double back-propagation). CPU seconds are printed next to wall seconds.

    python bench/bench_adversarial.py            # default model, 5 sentences, 500 steps (the thesis's budget)
    python bench/bench_adversarial.py --quick    # default-quick, 2 sentences, 60 steps
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

import torch  # noqa: E402

from corpora import load_dataset  # noqa: E402
from evaluation.adversarial.attack import attack, config_for  # noqa: E402
from explainers.embedding_forward import embedding_function  # noqa: E402
from models import load_classifier  # noqa: E402
from models.attention_kernel import eager_attention  # noqa: E402


def bare_steps(classifier, encoding, steps: int) -> float:
    """``steps`` hand-written attack steps on Gradient x Input: the floor the attack's own loop is compared with."""
    forward, embeddings = embedding_function(classifier, encoding, "logit")
    delta = torch.zeros_like(embeddings, requires_grad=True)
    optimizer = torch.optim.Adam([delta], lr=0.1)
    started = time.perf_counter()
    for _ in range(steps):
        inputs = embeddings + delta.clamp(-2, 2)
        output = forward(inputs)[0, 0]
        gradient = torch.autograd.grad(output, inputs, create_graph=True)[0]
        scores = (gradient * inputs).sum(-1)[0].abs()
        loss = (scores / scores.sum())[:2].sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="default-quick, 2 sentences, 60 steps")
    parser.add_argument("--model", default=None)
    parser.add_argument("--count", type=int, default=None)
    args = parser.parse_args()
    model = args.model or ("default-quick" if args.quick else "default")
    count = args.count or (2 if args.quick else 5)
    steps = 60 if args.quick else 500
    classifier = load_classifier(model)
    examples = [e for e in load_dataset("sst2:dev") if 12 <= len(e.text.split()) <= 25][:count]
    print(f"model {model} · {count} SST-2 dev sentences of 12-25 words · {steps} steps · "
          f"threads {torch.get_num_threads()}")
    ratios = []
    for example in examples:
        encoding = classifier.encode(example.text)
        config = config_for("paper-003", steps=steps, tolerance=0.0)  # no early stop: equal step counts
        cpu, wall = time.process_time(), time.perf_counter()
        result = attack(classifier, encoding, "input_x_gradient", config)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        with eager_attention(classifier.model):  # the attack's kernel: SDPA has no double backward on the CPU
            floor = bare_steps(classifier, encoding, result.steps_taken)
        ratios.append(wall / floor)
        print(f"  {encoding.n_tokens:3d} tokens: attack {wall:6.2f} s wall ({cpu:6.2f} s CPU), {result.steps_taken} "
              f"steps; bare steps {floor:6.2f} s -> ratio {wall / floor:.2f}x; Rank Change {result.rank_change:.2f}, "
              f"Probability Change {result.probability_change:+.3f}")
    early = attack(classifier, classifier.encode(examples[0].text), "input_x_gradient", config_for("paper-003",
                                                                                                  steps=steps))
    print(f"with the thesis's early stop: {early.steps_taken} of {steps} steps ({early.stop_reason})")
    ig_steps = 8 if args.quick else 50
    started = time.perf_counter()
    ig = attack(classifier, classifier.encode(examples[0].text), "integrated_gradients",
                config_for("paper-003", steps=5, ig_steps=ig_steps, tolerance=0.0))
    per_step = (time.perf_counter() - started) / ig.steps_taken
    print(f"Integrated Gradients ({ig_steps} path points): {per_step:.2f} s per step -> about "
          f"{per_step * 500 / 60:.1f} min for the thesis's 500 steps per sentence")
    print(f"median ratio to bare steps: {sorted(ratios)[len(ratios) // 2]:.2f}x · peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
