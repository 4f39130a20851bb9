"""CPU seconds per masked-LM training step: the vocabulary projection at the target positions only (what
``models/mlm/prepare.py`` does) against at every position (``BertForMaskedLM``'s own loss), interleaved in one
process on one thread so both see the same machine load.

    python bench/bench_mlm_training.py [--steps 8] [--recipe mlm-long]

Needs the prepared ``mlm`` (``python cli.py prepare-mlm``): it starts from its weights, as ``mlm-long`` does.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from models.mlm.prepare import _collate, build_model, masked_batches, masked_lm_loss, training_sentences  # noqa: E402
from models.mlm.recipe import RECIPES, find_prepared_mlm  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8, help="measured steps per variant (after one warm-up each)")
    parser.add_argument("--recipe", default="mlm-long", choices=list(RECIPES))
    args = parser.parse_args()
    torch.set_num_threads(1)
    recipe = RECIPES[args.recipe]
    start = find_prepared_mlm(RECIPES["mlm"])
    if start is None:
        sys.exit("Prepare 'mlm' first: python cli.py prepare-mlm")
    model, tokenizer = build_model(recipe.trainable_layers, recipe.seed, recipe.train_embeddings, start)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    batches = masked_batches(tokenizer, training_sentences(recipe)[:4000], recipe, {"seen": 0})

    def every_position(ids, attention, labels):
        return model(input_ids=ids, attention_mask=attention, labels=labels).loss

    variants = {"target positions only": lambda *b: masked_lm_loss(model, *b), "every position": every_position}
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    for step in range(args.steps + 1):
        batch = _collate(next(batches), tokenizer.pad_token_id, "cpu")
        for name, loss_of in variants.items():  # the same batch for both, one after the other
            started = time.process_time()
            loss = loss_of(*batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step:  # the first step of each is a warm-up
                seconds[name].append(time.process_time() - started)
    targets = int((batch[2] >= 0).sum())
    print(f"recipe {recipe.name}, batch {recipe.batch_size} ({batch[0].shape[1]} tokens wide, {targets} targets in "
          f"the last), {args.steps} steps each, 1 thread, CPU seconds per step (median):")
    for name, values in seconds.items():
        print(f"  {name:24s} {statistics.median(values):.2f} s  (min {min(values):.2f}, max {max(values):.2f})")


if __name__ == "__main__":
    main()
