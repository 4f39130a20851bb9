"""`cli.py prepare`: build a built-in model from the bundled MiniLM and cache it."""
from __future__ import annotations

import sys

from tqdm import tqdm

from commands.common import add_output_options, check_out, report_manifest, training_progress
from models.prepare import RECIPES, find_prepared, prepare, read_manifest


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("prepare", help="build and cache a built-in model (default, default-quick, "
                                                   "default-nli)",
                                   epilog="Input Marginalization, LIME-BERT, leave-one-out with MLM fill, DeletionBERT "
                                          "and ROAR-BERT also need the masked LM: `python cli.py prepare-mlm`.")
    parser.add_argument("--model", default="default", choices=list(RECIPES))
    parser.add_argument("--quick", action="store_true", help="shorthand for --model default-quick")
    parser.add_argument("--force", action="store_true", help="rebuild even if cached")
    add_output_options(parser, "the model's manifest", json="the manifest", csv="one row: folder, accuracy, ...")
    parser.set_defaults(handler=handle)




def handle(args) -> int:
    out = check_out(args.out)
    name = "default-quick" if args.quick else args.model
    cached = find_prepared(name)
    if cached is not None and not args.force:
        manifest = read_manifest(cached)
        print(f"'{name}' is already prepared: {cached} ({manifest['eval_data']} accuracy {manifest['accuracy']:.2%}).",
              file=sys.stderr if args.json else sys.stdout)
        report_manifest(cached, manifest, args, out)
        return 0
    bar, progress = training_progress(f"prepare {name}")

    folder = prepare(name, progress=progress, force=args.force, log=tqdm.write)
    bar.close()
    manifest = read_manifest(folder)
    if not manifest["meets_target"]:
        print(f"warning: accuracy {manifest['accuracy']:.2%} is below the target {manifest['min_accuracy']:.0%}.",
              file=sys.stderr)
    report_manifest(folder, manifest, args, out)
    return 0
