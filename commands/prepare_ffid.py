"""`cli.py prepare-ffid`: F-Fidelity's fine-tuned copy of a model (random word removal at ratio beta), cached with a
manifest; a stopped fine-tune resumes at its last saved chunk when the same command runs again.

    python cli.py prepare-ffid --model default                 # beta 0.1, [MASK], 300 steps on 2,000 SST-2 sentences
    python cli.py prepare-ffid --model default --estimate      # the budget, then exit
    python cli.py evaluate --metrics ffid --methods lime,saliency --limit 100    # FFid+ / FFid- on top of it
"""
from __future__ import annotations

import sys

import pandas as pd

from commands.common import (
    add_output_options,
    add_schema_flags,
    check_out,
    print_json,
    run_resumable,
    schema_values,
    write_out,
)
from evaluation.faithfulness.f_fidelity_finetune import (
    FinetuneConfig,
    budget,
    find_finetuned,
    finetune_cell,
    prepare_run,
    with_fingerprint,
)
from evaluation.runs.store import ResultStore
from explainers.params import options_from
from models import UserFacingError, cached_classifier


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("prepare-ffid", help="fine-tune a model's copy with random word removal for "
                                                        "F-Fidelity (FFid+ / FFid-)",
                                   description=__doc__.split("\n\n")[0])
    add_schema_flags(parser, FinetuneConfig)
    parser.add_argument("--estimate", action="store_true", help="print the fine-tune's budget, then exit")
    parser.add_argument("--force", action="store_true", help="fine-tune again even if a copy exists")
    parser.add_argument("--store", default=None, help="result store (SQLite) path; default under the cache folder")
    add_output_options(parser, "the copy's manifest", json="the manifest", csv="one row: folder, beta, steps, ...")
    parser.set_defaults(handler=handle)


def report(manifest: dict, args, out) -> None:
    if out:
        write_out(out, manifest, pd.json_normalize(manifest))
    if args.json:
        print_json(manifest)
    else:
        print(f"F-Fidelity copy of {manifest['model']} (beta {manifest['beta']:g}, {manifest['operator']}, "
              f"{manifest['steps']} steps, {manifest['seconds']:.0f} s): {manifest['folder']}")


def handle(args) -> int:
    out = check_out(args.out)
    config = with_fingerprint(options_from(FinetuneConfig, schema_values(args, FinetuneConfig)))
    classifier = cached_classifier(config.model)
    found = find_finetuned(config.model_fingerprint, config.beta, config.operator)
    if found is not None and not args.force:
        print(f"'{config.model}' already has an F-Fidelity copy at beta {config.beta:g} ({config.operator}).",
              file=sys.stderr)
        report(found, args, out)
        return 0
    cost = budget(config, classifier)
    print(f"F-Fidelity fine-tune: {cost['steps']} steps x batch {config.batch_size} = {cost['examples_seen']} "
          f"examples seen; about {cost['seconds'] / 60:.1f} min on {classifier.device} (cost model)", file=sys.stderr)
    if args.estimate:
        return 0
    store, run_id, cells = prepare_run(config, ResultStore(args.store) if args.store else None)
    summary = run_resumable(store, run_id, cells, finetune_cell, "prepare-ffid", "chunk",
                            "run the same command again to resume from the last saved chunk")
    if summary is None:
        return 130
    if summary.errors:
        raise UserFacingError("The F-Fidelity fine-tune failed: " + "; ".join(summary.errors.values()))
    manifest = find_finetuned(config.model_fingerprint, config.beta, config.operator)
    if manifest is None:
        raise UserFacingError("The F-Fidelity fine-tune finished but its manifest is not in the store; run the same "
                              "command again to rebuild it.")
    report(manifest, args, out)
    return 0
