"""`cli.py known-feature`: paper 003's known-feature task: train (once) the small model on SST-2 with random labels
and the label word appended, then report per method ground-truth overlap (precision@k), mean rank, rank % and
ground-truth mass with bootstrap 95 % CIs and the random baseline.

    python cli.py known-feature --limit 200 --methods integrated_gradients:paper-003,lime,kernel_shap,saliency:paper-003
    python cli.py known-feature --model minilm-l2      # the twin of another built-in model (same blocks / attention)
    python cli.py known-feature --model path/to/folder # a classifier already trained on the known-feature task
    python cli.py known-feature --documents --limit 20 # known-feature-long: the document twin, documents in windows

Paper 003 s. 3.1 trains each model size on the task; ``--model`` names which: a built-in model's twin is
trained once (its recipe with the model's shape), a folder is used as it is.
"""
from __future__ import annotations

import sys
from pathlib import Path

from tqdm import tqdm

from commands.common import (
    add_output_options,
    check_out,
    job_progress,
    parse_method_specs,
    print_json,
    training_progress,
)
from commands.evaluate import SUMMARY_COLUMNS, write_summary
from evaluation.faithfulness.known_feature import (
    RECIPE,
    is_prepared,
    model_dir,
    paper_003_methods,
    prepare_known_feature_model,
    read_manifest,
    recipe_for,
)
from evaluation.suite.known_feature_long import DATASET, check_options, document_recipe, findings
from evaluation.suite.run_report import run_table, wide_table
from evaluation.suite.runner import run_evaluation
from models import UserFacingError
from models.document_twin import estimate, prepare_document_twin, twin_dir
from models.document_twin import is_prepared as twin_is_prepared
from models.document_twin import read_manifest as twin_manifest
from models.prepare import RECIPES

# paper 003's methods with its settings, where the method (and preset) is registered


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("known-feature",
                                   help="paper 003's known-feature task: train the model, score methods")
    parser.add_argument("--model", default="default",
                        help="a built-in model (its known-feature twin of the same shape, trained once: "
                             f"{', '.join(RECIPES)}) or the folder of a classifier trained on the known-feature task")
    parser.add_argument("--limit", type=int, default=200, help="known-feature dev sentences to explain (0 = all 872)")
    parser.add_argument("--methods", default=None,
                        help="comma-separated method[:preset] (default: paper 003's methods)")
    parser.add_argument("--prepare", action="store_true", help="only train (or find) the model")
    parser.add_argument("--force", action="store_true", help="retrain even if cached")
    parser.add_argument("--seed", type=int, default=0, help="tie-breaking and random-baseline seed")
    parser.add_argument("--documents", action="store_true",
                        help="known-feature-long: the built-in model's document twin (its known-feature twin "
                             "fine-tuned on documents read in windows, trained once) on known-feature-long:dev")
    add_output_options(parser, "the summary", csv="one row per method x metric",
                       json="the summary, the configuration and every per-example value")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    out = check_out(args.out)
    methods = parse_method_specs(args.methods) if args.methods else paper_003_methods()
    recipe = recipe_for(args.model)
    if recipe is None:  # a folder: already trained on the task
        folder = Path(args.model).expanduser()
        if not folder.is_dir():
            raise UserFacingError(f"--model {args.model}: not a built-in model ({', '.join(RECIPES)}) nor a folder. "
                                  f"Name a built-in model (its known-feature twin is trained once) or the folder of "
                                  f"a classifier trained on the known-feature task.")
        if args.prepare or args.force:
            raise UserFacingError("--prepare / --force train a built-in model's twin; a folder is used as it is.")
        print(f"known-feature model: {folder} (as given: it must be trained on the known-feature task)",
              file=sys.stderr if args.json else sys.stdout)
    else:
        force = args.force and not args.documents  # with --documents, --force retrains the document twin only
        if not is_prepared(recipe) or force:
            bar, progress = training_progress(f"train the known-feature twin of {args.model}")
            prepare_known_feature_model(recipe, force=force, progress=progress, log=tqdm.write)
            bar.close()
        folder = model_dir(recipe)
        manifest = read_manifest(recipe)
        print(f"known-feature model: {folder} (twin of {args.model}; held-out task accuracy "
              f"{manifest['accuracy']:.1%}, {manifest['train_examples']} training sentences, label seed "
              f"{RECIPE.label_seed})", file=sys.stderr if args.json else sys.stdout)
    dataset = f"known-feature:dev:{RECIPE.label_seed}"
    if args.documents:
        if recipe is None:
            raise UserFacingError("--documents trains the document twin of a built-in model; name one with --model "
                                  f"({', '.join(RECIPES)}).")
        folder, dataset = document_twin(args), DATASET
    if args.prepare:
        return 0
    bar, progress = job_progress("explaining", "example")

    store, summary = run_evaluation(str(folder), dataset, methods,
                                    ["known-feature"], limit=args.limit or None,
                                    options=check_options(args.seed), progress=progress)
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
    if args.documents:  # which methods find the planted word, against the random ranking (as the app shows it)
        print(findings(table).to_string(index=False))
    return 0


def document_twin(args) -> Path:
    """The document twin of ``args.model``'s short twin (trained once, its cost estimated first); its folder."""
    recipe = document_recipe(args.model)
    source = recipe.source
    stream = sys.stderr if args.json else sys.stdout
    if not twin_is_prepared(recipe) or args.force:
        cost = estimate(recipe)
        print(f"training the document twin: {cost['train_windows']} windows of {cost['window_tokens']} tokens, about "
              f"{cost['seconds'] / 60:.0f} min here", file=stream)
        bar, progress = training_progress(f"train the document twin of {source}")
        prepare_document_twin(recipe, force=args.force, progress=progress,
                              log=lambda message: tqdm.write(message, file=stream))
        bar.close()
    manifest = twin_manifest(recipe)
    print(f"document twin: {twin_dir(recipe)} (held-out accuracy {manifest['accuracy']:.1%} on "
          f"{manifest['eval_examples']} documents, from {manifest['source_accuracy']:.1%} for {source} read in "
          f"windows)", file=stream)
    return twin_dir(recipe)
