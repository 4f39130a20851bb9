"""The learning curve of the ``mlm-long`` recipe: train it in chunks of ``--every`` steps (each chunk resumes from
the recipe's checkpoint, as ``cli.py prepare-mlm --recipe mlm-long`` does after a stop), and after each chunk
measure the held-out top-1 / top-10 on SST-2 dev (the recipe's evaluation, 200 sentences, every word masked once)
with the CPU seconds the training has spent so far. One torch thread.

    python bench/study_mlm_long_curve.py --until 400 --every 100 [--out curve.json]

The checkpoint it leaves is the recipe's own: ``python cli.py prepare-mlm --recipe mlm-long`` continues from it.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from models.mlm.filler import MaskedLMFiller  # noqa: E402
from models.mlm.prepare import build_model, evaluate_filler, evaluation_inputs, train_mlm, training_sentences  # noqa: E402
from models.mlm.recipe import RECIPES, checkpoint_folder, find_prepared_mlm  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipe", default="mlm-long", choices=list(RECIPES))
    parser.add_argument("--until", type=int, default=400, help="stop after this step")
    parser.add_argument("--every", type=int, default=100, help="steps between evaluations")
    parser.add_argument("--out", default=None, help="append the curve's points to this JSON-lines file")
    args = parser.parse_args()
    torch.set_num_threads(1)
    recipe = RECIPES[args.recipe]
    start = find_prepared_mlm(RECIPES[recipe.continue_from]) if recipe.continue_from else None
    sentences = training_sentences(recipe)
    eval_sets = evaluation_inputs(recipe)
    held_out = {" ".join(t.split()) for inputs in eval_sets.values() for pair in inputs for t in pair if t}
    sentences = [s for s in sentences if s not in held_out]
    dev = eval_sets["sst2:dev"]
    reached = {"step": 0}

    def progress(step: int, total: int, info: dict) -> None:
        reached["step"], reached["loss"] = step, info["loss"]

    target = args.every
    while target <= args.until:
        model, tokenizer = build_model(recipe.trainable_layers, recipe.seed, recipe.train_embeddings, start)
        record = train_mlm(model, tokenizer, sentences, recipe, progress=progress, device="cpu",
                           should_stop=lambda: reached["step"] >= target, checkpoint=checkpoint_folder(recipe))
        if record["resumed_from_step"] >= target:  # this chunk was done by an earlier run
            target = record["resumed_from_step"] + args.every
            continue
        started = time.process_time()
        result = evaluate_filler(MaskedLMFiller(model, tokenizer, name=recipe.name, device="cpu"), dev)
        point = {"recipe": recipe.name, "step": record["steps"], "train_cpu_seconds": record["cpu_seconds"],
                 "loss_last_20": round(reached["loss"], 3), "sst2_dev_top1": result["top1_accuracy"],
                 "sst2_dev_top10": result["top10_accuracy"], "eval_cpu_seconds": round(time.process_time() - started, 1),
                 "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
        print(json.dumps(point), flush=True)
        if args.out:
            with open(args.out, "a") as handle:
                handle.write(json.dumps(point) + "\n")
        target += args.every


if __name__ == "__main__":
    main()
