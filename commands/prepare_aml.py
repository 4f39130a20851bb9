"""`cli.py prepare-aml`: train AML's attribution model G for one classifier (pAML) and cache it with a manifest.

    python cli.py prepare-aml --model default                          # tuned for AOPC comprehensiveness
    python cli.py prepare-aml --model default-quick --tune sufficiency
    python cli.py prepare-aml --model ./my-model --data sst2:train --search-trials 40   # Optuna lambda search
    python cli.py prepare-aml --model zoo-causal --generator default --data sst2:train   # G on another encoder
"""
from __future__ import annotations

import sys
from dataclasses import replace

from tqdm import tqdm

from commands.common import add_output_options, check_out, report_manifest, training_progress
from corpora import load_dataset
from explainers.mask_learning.aml_cross_training import prepare_cross_aml
from explainers.mask_learning.aml_store import find_checkpoint, read_manifest
from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
from explainers.mask_learning.cross_backbone import cross_folder
from explainers.mask_learning.selection import DEFAULT_METRIC, METRICS, metric_named
from models import UserFacingError, load_classifier


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("prepare-aml", help="train and cache AML's attribution model for a classifier "
                                                       "(needed by the aml method)")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id of the explained model")
    parser.add_argument("--tune", default=DEFAULT_METRIC, choices=list(METRICS),
                        help=f"validation metric the checkpoint is selected on (default {DEFAULT_METRIC})")
    parser.add_argument("--data", default=None, help="dataset id to train on (default: the model's training data, "
                                                     "e.g. sst2:train for the built-in models)")
    parser.add_argument("--train-size", type=int, default=AMLRecipe.train_size, help="training inputs (paper: 800)")
    parser.add_argument("--validation-size", type=int, default=AMLRecipe.validation_size)
    parser.add_argument("--epochs", type=float, default=AMLRecipe.epochs)
    parser.add_argument("--lambdas", default=None, metavar="P,A,INV",
                        help="fixed lambda_p, lambda_a, lambda_inv (default "
                             f"{AMLRecipe.lambda_p:g},{AMLRecipe.lambda_a:g},{AMLRecipe.lambda_inv:g})")
    parser.add_argument("--search-trials", type=int, default=0,
                        help="search the lambdas with Optuna TPE first (paper: 40 trials; needs optuna)")
    parser.add_argument("--generator", default=None, metavar="MODEL",
                        help="train G on this encoder's backbone instead of the model's own (paper 004's decoder "
                             "setting, e.g. --generator default for a causal model); explain with aml's generator "
                             "option")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    add_output_options(parser, "the attribution model's manifest", json="the manifest",
                       csv="one row: folder, tuned_for, validation_score, ...")
    parser.set_defaults(handler=handle)




def parse_lambdas(value: str | None) -> dict:
    if not value:
        return {}
    try:
        p, a, inv = (float(v) for v in value.split(","))
    except ValueError:
        raise UserFacingError(f"--lambdas expects three numbers P,A,INV (e.g. 1,10,10); got {value!r}.") from None
    return {"lambda_p": p, "lambda_a": a, "lambda_inv": inv}


def training_inputs(classifier, data: str | None) -> tuple[str, list]:
    data = data or classifier.manifest.get("train_data")
    if not data:
        raise UserFacingError(f"Say which data to train AML on for '{classifier.name}': --data DATASET:SPLIT (the "
                              f"split the model was trained on, e.g. sst2:train).")
    examples = load_dataset(data)
    return data, [(e.text, e.pair) for e in examples]


def handle(args) -> int:
    out = check_out(args.out)
    metric = metric_named(args.tune)
    recipe = replace(AMLRecipe(), tune=metric.name, train_size=args.train_size,
                     validation_size=args.validation_size, epochs=args.epochs, **parse_lambdas(args.lambdas))
    classifier = load_classifier(args.model)
    cached = find_checkpoint(classifier.fingerprint, metric)
    if args.generator:  # G on another backbone, in its own folder
        folder = cross_folder(classifier.fingerprint, metric, args.generator)
        cached = folder if (folder / "manifest.json").is_file() else None
    if cached is not None and not args.force:
        manifest = read_manifest(cached)
        print(f"AML for '{classifier.name}' tuned for {metric.name} is already prepared: {cached} (validation "
              f"{manifest['validation_score']:.4f}).", file=sys.stderr if args.json else sys.stdout)
        report_manifest(cached, manifest, args, out)
        return 0
    data, inputs = training_inputs(classifier, args.data)
    bar, progress = training_progress("prepare-aml")

    if args.generator:
        folder = prepare_cross_aml(classifier, args.generator, inputs, recipe, data_id=data, force=True,
                                   log=tqdm.write, progress=progress, search_trials=args.search_trials)
    else:
        folder = prepare_aml(classifier, inputs, recipe, data_id=data, progress=progress, force=True,
                             search_trials=args.search_trials, log=tqdm.write)
    bar.close()
    manifest = read_manifest(folder)
    print(f"AML for '{classifier.name}' tuned for {manifest['tuned_for']['label']}: validation {manifest['validation_score']:.4f}, "
          f"lambdas {manifest['lambdas']}, {manifest['seconds']:.0f} s -> {folder}",
          file=sys.stderr if args.json else sys.stdout)
    report_manifest(folder, manifest, args, out)
    return 0
