#!/usr/bin/env python
"""Benchmark: the attack on explanations (paper 003 sections 2.3, 3.5) on SST-2 dev sentences.

Target: the attack on Gradient x Input costs little more than the passes it must make. Prints, per
sentence, the attack's seconds and steps taken, and the ratio against a baseline measured in the same run: the same
number of bare steps (one forward, the explanation's gradient with create_graph, one backward through it, an Adam
step) written directly in torch on the same input. Integrated Gradients' cost is stated per step (its path has
``ig_steps`` points, each with the same double back-propagation). CPU seconds are printed next to wall seconds.

    python bench/bench_adversarial.py            # default model, 5 sentences, 500 steps (the thesis's budget)
    python bench/bench_adversarial.py --quick    # default-quick, 2 sentences, 60 steps
    python bench/bench_adversarial.py --batched --count 16   # the card's attack, batched vs one at a time, per step

``--batched`` compares, in one run and interleaved (batched, one at a time, batched, one at a time; best of
each), the report card's attack (``CardConfig``: its first ``attack_limit`` SST-2 dev sentences, or ``--count``;
saliency, Gradient x Input and IG through the 8-point loop) run as ``attack_many`` batches against ``attack`` one
sentence at a time, for ``--steps`` steps without early stop (two counts: the cost per step, from the difference;
it does not depend on the step, so the card's 200 scale linearly; an early stop only shortens a sentence's run, in
both arms). Prints per method CPU and wall seconds and the exact counts (forward and backward passes, batches),
which do not depend on the machine's load.
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
from evaluation.adversarial.attack import attack, attack_groups, attack_many, rows_per_input  # noqa: E402
from evaluation.adversarial.config import config_for  # noqa: E402
from evaluation.suite.report_card import CardConfig  # noqa: E402
from explainers.embedding_forward import embedding_function  # noqa: E402
from models import load_classifier  # noqa: E402
from models.attention_kernel import eager_attention  # noqa: E402
from models.metering import metered  # noqa: E402


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


def batched_comparison(model: str, steps: list[int], rounds: int, count: int | None, methods: list[str]) -> None:
    """The card's attack, batched vs one at a time (see the module docstring); ``count`` sentences (default: the
    card's ``attack_limit``). With two step counts, each arm's cost per step is the difference of its two runs
    over the step difference: the clean explanations (and IG's full re-explanation) cancel out."""
    card = CardConfig()
    classifier = load_classifier(model)
    examples = load_dataset("sst2:dev", limit=count or card.attack_limit, label_names=classifier.labels)
    encodings = [classifier.encode(e.text, e.pair) for e in examples]
    print(f"model {model} · the card's {len(encodings)} SST-2 dev sentences ({sum(e.n_tokens for e in encodings)} "
          f"tokens, {min(e.n_tokens for e in encodings)}-{max(e.n_tokens for e in encodings)} each) · steps "
          f"{steps}, no early stop · threads {torch.get_num_threads()} · load {open('/proc/loadavg').read().strip()}",
          flush=True)
    arms = {"batched": lambda m, c: attack_many(classifier, encodings, m, c),
            "one at a time": lambda m, c: [attack(classifier, e, m, c) for e in encodings]}
    for method in methods:
        best = {}
        for count_of_steps in steps:
            config = config_for(None, steps=count_of_steps, seed=card.seed, loop_ig_steps=card.attack_loop_ig_steps,
                                tolerance=0.0)
            groups = attack_groups(classifier, encodings, rows_per_input(method, config))
            for _ in range(rounds):
                for arm, run in arms.items():
                    cpu, wall = time.process_time(), time.perf_counter()
                    with metered() as meter:
                        run(method, config)
                    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                    key = (arm, count_of_steps)
                    best[key] = min(best.get(key, (float("inf"), float("inf"))), (cpu, wall))
                    print(f"  {method:22s} {count_of_steps:3d} steps {arm:13s} {cpu:7.1f} s CPU {wall:7.1f} s wall · "
                          f"passes {meter.forward_passes} forward, {meter.backward_passes} backward in "
                          f"{meter.batches} batches" + (f" (groups {[len(g) for g in groups]})"
                                                        if arm == "batched" else ""), flush=True)
        if len(steps) == 2:
            low, high = steps
            per_step = {arm: ((best[(arm, high)][0] - best[(arm, low)][0]) / (high - low),
                              (best[(arm, high)][1] - best[(arm, low)][1]) / (high - low)) for arm in arms}
            print(f"  {method}: per step, batched {per_step['batched'][0]:.2f} CPU s ({per_step['batched'][1]:.2f} "
                  f"s wall), one at a time {per_step['one at a time'][0]:.2f} CPU s "
                  f"({per_step['one at a time'][1]:.2f} s wall): CPU ratio "
                  f"{per_step['one at a time'][0] / per_step['batched'][0]:.2f}x (best of {rounds})", flush=True)
        else:
            (only,) = steps
            print(f"  {method}: CPU ratio one at a time / batched "
                  f"{best[('one at a time', only)][0] / best[('batched', only)][0]:.2f}x, the clean explanations "
                  f"included (best of {rounds})", flush=True)
    print(f"load {open('/proc/loadavg').read().strip()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="default-quick, 2 sentences, 60 steps")
    parser.add_argument("--model", default=None)
    parser.add_argument("--count", type=int, default=None)
    parser.add_argument("--batched", action="store_true", help="the report card's attack, batched vs one at a time")
    parser.add_argument("--steps", default="2,6", help="--batched: steps per attack, or two counts for the cost per "
                                                        "step (default 2,6)")
    parser.add_argument("--methods", default="saliency,input_x_gradient,integrated_gradients",
                        help="--batched: the attacked methods")
    parser.add_argument("--rounds", type=int, default=2, help="--batched: interleaved rounds, best of (default 2)")
    args = parser.parse_args()
    if args.batched:
        batched_comparison(args.model or ("default-quick" if args.quick else "default"),
                           [int(v) for v in args.steps.split(",")], args.rounds, args.count, args.methods.split(","))
        return 0
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
