"""`cli.py prepare-mlm`: build the offline masked LM (a small stand-in for BERT) or evaluate a masked LM.

    python cli.py prepare-mlm                      # build once (minutes on a CPU), cached with a manifest
    python cli.py prepare-mlm --force              # rebuild
    python cli.py prepare-mlm --recipe mlm-plus    # the stronger one (trains 'mlm' further; ~10 CPU-minutes)
    python cli.py prepare-mlm --recipe mlm-long --stop-after 50   # much longer (a GPU, or CPU sessions): stops
                                                   # after 50 minutes with a checkpoint; run it again to resume
    python cli.py prepare-mlm --evaluate bert-base-uncased   # held-out top-1 / top-10 of any masked LM
"""
from __future__ import annotations

import dataclasses
import sys
import time

import pandas as pd
from tqdm import tqdm

from commands.common import add_output_options, check_out, print_json, training_progress, write_out
from models.mlm import (
    RECIPE,
    RECIPES,
    evaluate_filler,
    evaluation_inputs,
    find_prepared_mlm,
    load_filler,
    prepare_mlm,
    read_mlm_manifest,
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("prepare-mlm", help="build the offline masked LM used by Input Marginalization, "
                                                       "LIME-BERT and the MLM-fill operator")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("--recipe", choices=list(RECIPES), default=RECIPE.name,
                        help=f"which offline masked LM to build (default {RECIPE.name}; mlm-plus trains it further)")
    parser.add_argument("--stop-after", type=float, metavar="MINUTES", default=None,
                        help="stop training after this many minutes (wall clock); a recipe with checkpoints "
                             "(mlm-long) keeps its progress and the same command resumes it")
    parser.add_argument("--evaluate", metavar="MASKED_LM", default=None,
                        help="instead of building: held-out top-1/top-10 accuracy of a masked LM ('mlm', a folder, "
                             "or a hub id with EXWB_ALLOW_HUB=1)")
    parser.add_argument("--limit", type=int, default=RECIPE.eval_limit,
                        help=f"inputs per evaluation dataset for --evaluate (default {RECIPE.eval_limit})")
    add_output_options(parser, "the held-out evaluation", csv="one row per evaluation dataset",
                       json="the masked LM and its evaluation per dataset")
    parser.set_defaults(handler=handle)


def _summary(evaluation: dict) -> str:
    return "; ".join(f"{name}: top-1 {r['top1_accuracy']:.1%}, top-10 {r['top10_accuracy']:.1%} ({r['words']} words)"
                     for name, r in evaluation.items())


def report(masked_lm: str, evaluation: dict, args, out) -> None:
    """The held-out evaluation by the output convention: --out FILE, --json, else one summary line."""
    data = {"masked_lm": masked_lm, "evaluation": evaluation}
    if out:
        write_out(out, data, pd.DataFrame([{"masked_lm": masked_lm, "dataset": name, **result}
                                           for name, result in evaluation.items()]))
    if args.json:
        print_json(data)
    else:
        print(f"{masked_lm}: {_summary(evaluation)}")


def handle(args) -> int:
    out = check_out(args.out)
    if args.evaluate:
        filler = load_filler(args.evaluate)
        inputs = evaluation_inputs(dataclasses.replace(RECIPE, eval_limit=max(1, args.limit)))
        evaluation = {name: evaluate_filler(filler, items) for name, items in
                      tqdm(inputs.items(), desc=f"evaluating {args.evaluate}", unit="dataset")}
        report(args.evaluate, evaluation, args, out)
        return 0
    recipe = RECIPES[args.recipe]
    cached = find_prepared_mlm(recipe)
    if cached is not None and not args.force:
        manifest = read_mlm_manifest(cached)
        print(f"The masked LM '{recipe.name}' is already prepared: {cached}.", file=sys.stderr)
        report(recipe.name, manifest["evaluation"], args, out)
        return 0
    bar, progress = training_progress(f"prepare-mlm {recipe.name}", recipe.steps)
    deadline = time.monotonic() + 60 * args.stop_after if args.stop_after else None
    folder = prepare_mlm(recipe, progress=progress, force=args.force, log=tqdm.write,
                         should_stop=(lambda: time.monotonic() > deadline) if deadline else None)
    bar.close()
    manifest = read_mlm_manifest(folder)
    print(f"'{recipe.name}' is a small stand-in for bert-base-uncased, saved to {folder}.", file=sys.stderr)
    report(recipe.name, manifest["evaluation"], args, out)
    return 0
