"""`cli.py prepare-mlm`: build the offline masked LM (a small stand-in for BERT) or evaluate a masked LM.

    python cli.py prepare-mlm                      # build once (minutes on a CPU), cached with a manifest
    python cli.py prepare-mlm --force              # rebuild
    python cli.py prepare-mlm --evaluate bert-base-uncased   # held-out top-1 / top-10 of any masked LM
"""
from __future__ import annotations

import dataclasses
import json

from tqdm import tqdm

from models.mlm import (BUILT_IN_MLM, RECIPE, evaluate_filler, evaluation_inputs, find_prepared_mlm, load_filler,
                        prepare_mlm, read_mlm_manifest)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("prepare-mlm", help="build the offline masked LM used by Input Marginalization, "
                                                       "LIME-BERT and the MLM-fill operator")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    parser.add_argument("--evaluate", metavar="MASKED_LM", default=None,
                        help="instead of building: held-out top-1/top-10 accuracy of a masked LM ('mlm', a folder, "
                             "or a hub id with EXWB_ALLOW_HUB=1)")
    parser.add_argument("--limit", type=int, default=RECIPE.eval_limit,
                        help=f"inputs per evaluation dataset for --evaluate (default {RECIPE.eval_limit})")
    parser.set_defaults(handler=handle)


def _summary(evaluation: dict) -> str:
    return "; ".join(f"{name}: top-1 {r['top1_accuracy']:.1%}, top-10 {r['top10_accuracy']:.1%} ({r['words']} words)"
                     for name, r in evaluation.items())


def handle(args) -> int:
    if args.evaluate:
        filler = load_filler(args.evaluate)
        inputs = evaluation_inputs(dataclasses.replace(RECIPE, eval_limit=max(1, args.limit)))
        evaluation = {name: evaluate_filler(filler, items) for name, items in
                      tqdm(inputs.items(), desc=f"evaluating {args.evaluate}", unit="dataset")}
        print(json.dumps({"masked_lm": args.evaluate, "evaluation": evaluation}, indent=2))
        return 0
    cached = find_prepared_mlm()
    if cached is not None and not args.force:
        manifest = read_mlm_manifest(cached)
        print(f"The masked LM '{BUILT_IN_MLM}' is already prepared: {cached} ({_summary(manifest['evaluation'])}).")
        return 0
    bar = tqdm(total=RECIPE.steps, desc="prepare-mlm", unit="step")

    def progress(step: int, total: int, info: dict) -> None:
        bar.total = total
        bar.update(step - bar.n)
        bar.set_postfix(loss=f"{info['loss']:.3f}")

    folder = prepare_mlm(progress=progress, force=args.force, log=tqdm.write)
    bar.close()
    manifest = read_mlm_manifest(folder)
    print(f"'{BUILT_IN_MLM}' (a small stand-in for bert-base-uncased): {_summary(manifest['evaluation'])}.")
    return 0
