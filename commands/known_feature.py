"""`cli.py known-feature`: paper 003's known-feature task: train (once) the small model on SST-2 with random labels
and the label word appended, then report per method ground-truth overlap (precision@k), mean rank, rank % and
ground-truth mass with bootstrap 95 % CIs and the random baseline.

    python cli.py known-feature --limit 200 --methods integrated_gradients:paper-003,lime,kernel_shap,saliency:paper-003
"""
from __future__ import annotations

import sys

from tqdm import tqdm

from evaluation.runs.runner import run_evaluation
from evaluation.faithfulness.known_feature import RECIPE, paper_003_methods, is_prepared, model_dir, prepare_known_feature_model, read_manifest
from evaluation.faithfulness.report import run_table, wide_table

from commands.common import (add_output_options, check_out, job_progress, parse_method_specs, print_json,
                             training_progress)
from commands.evaluate import SUMMARY_COLUMNS, write_summary

# paper 003's methods with its settings, where the method (and preset) is registered


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("known-feature",
                                   help="paper 003's known-feature task: train the model, score methods")
    parser.add_argument("--limit", type=int, default=200, help="known-feature dev sentences to explain (0 = all 872)")
    parser.add_argument("--methods", default=None,
                        help="comma-separated method[:preset] (default: paper 003's methods)")
    parser.add_argument("--prepare", action="store_true", help="only train (or find) the model")
    parser.add_argument("--force", action="store_true", help="retrain even if cached")
    parser.add_argument("--seed", type=int, default=0, help="tie-breaking and random-baseline seed")
    add_output_options(parser, "the summary", csv="one row per method x metric",
                       json="the summary, the configuration and every per-example value")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    out = check_out(args.out)
    methods = parse_method_specs(args.methods) if args.methods else paper_003_methods()
    if not is_prepared() or args.force:
        bar, progress = training_progress("train known-feature model")

        prepare_known_feature_model(force=args.force, progress=progress, log=tqdm.write)
        bar.close()
    manifest = read_manifest()
    print(f"known-feature model: {model_dir()} (held-out task accuracy {manifest['accuracy']:.1%}, "
          f"{manifest['train_examples']} training sentences, label seed {RECIPE.label_seed})",
          file=sys.stderr if args.json else sys.stdout)
    if args.prepare:
        return 0
    bar, progress = job_progress("explaining", "example")

    store, summary = run_evaluation(str(model_dir()), f"known-feature:dev:{RECIPE.label_seed}", methods,
                                    ["known-feature"], limit=args.limit or None,
                                    options={"seed": args.seed, "random_orderings": 10}, progress=progress)
    bar.close()
    table = run_table(store, summary.run_id)
    table = table[[c for c in SUMMARY_COLUMNS if c in table.columns]]
    if out:
        write_summary(out, table, store, summary.run_id)
    if args.json:
        print_json({"run_id": summary.run_id, "summary": table.to_dict(orient="records")})
        return 0
    print(f"run {summary.run_id}: {summary.done}/{summary.total} sentences. Paper 003 (Fig. 4.1): IG, LIME and "
          f"KernelSHAP ≈ 1.0 overlap; gradient and gradient x input barely above random.")
    print(wide_table(table).to_string())
    return 0
