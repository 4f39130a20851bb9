"""`cli.py compare-models`: several models at dataset level (paper 003's size and architecture comparisons): known
feature, faithfulness against the random band, layer randomization and plausibility, per model and method.

    python cli.py compare-models --models default,minilm-l4,minilm-l2,minilm-causal --limit 16
    python cli.py compare-models --models default,minilm-l2 --checks known_feature --out cmp.json
    python cli.py compare-models --models ./my-model --known-feature-model ./my-model=./my-kf-model
    python cli.py compare-models --checks adversarial --attack-limit 16 --attack-steps 500   # the thesis's sizes
    python cli.py compare-models --checks faithfulness,sanity --protocol paper-003   # the thesis's protocol
    python cli.py compare-models --models default,minilm-causal --text "a gripping , funny film" \
        --methods saliency,leave_one_out                                              # one input, side by side

Every (model, check) is a cell of one stored run whose studies are stored too: adding a model to a finished
comparison computes only that model's cells. The figures (metric vs size, bars per model, randomization panels)
are drawn on the Compare-models page from the same stored run (commands never import ui/).
"""
from __future__ import annotations

import sys

import pandas as pd

from commands.common import (
    add_column_options,
    add_executor_flag,
    check_out,
    help_text,
    job_progress,
    parse_method_specs,
    print_json,
    write_out,
)
from corpora import check_dataset_id, normalize_typed_text
from evaluation.adversarial.config import ATTACKED_METHODS
from evaluation.suite import model_comparison_dataset as mcd
from evaluation.suite.model_comparison import ModelComparison, compare_models
from evaluation.suite.protocols import PROTOCOLS
from evaluation.suite.report_card import default_methods
from explainers import ParamError, label_for
from models import load_classifier
from models.prepare import ZOO

OUT_FORMATS = (".json", ".csv")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("compare-models", help="several models at dataset level: known feature, "
                                                          "faithfulness, layer randomization, plausibility")
    defaults = mcd.ComparisonConfig()
    parser.add_argument("--models", default=",".join(ZOO),
                        help="comma-separated built-in names, folders or hub ids (default: the offline zoo)")
    add_column_options(parser)  # --text-column / --label-column / --pair-column of a file: dataset
    parser.add_argument("--dataset", default="sst2:dev", help="dataset of the faithfulness and sanity checks")
    parser.add_argument("--limit", type=int, default=defaults.limit,
                        help="examples per check (each check's own limit below overrides it)")
    parser.add_argument("--checks", default=",".join(mcd.CHECKS), help=f"comma-separated, from: "
                                                                       f"{', '.join(mcd.CHECKS)}")
    parser.add_argument("--methods", default=None, help="comma-separated method[:preset] (default: paper 003's)")
    parser.add_argument("--text", default=None,
                        help="one input instead of a dataset: each model's prediction, every method's word scores "
                             "side by side (aligned by word) and the agreement between models per method")
    parser.add_argument("--pair", default=None, help="second segment of the one input (sentence pairs)")
    parser.add_argument("--protocol", default=defaults.protocol, choices=list(PROTOCOLS),
                        help="default: ERASER AOPC (words deleted) on --dataset and layer randomization with the "
                             "model's initializer; paper-003: paper 003's Def. 2.1/2.2 (5/10/20/50 %%, ceil, [MASK], "
                             "mean |delta p|) on each model's known-feature twin and layer randomization from N(0, 1)")
    for name in ("known-feature", "sanity", "plausibility"):
        parser.add_argument(f"--{name}-limit", type=int, default=None, help=f"examples of the {name} check")
    parser.add_argument("--attack-limit", type=int, default=defaults.attack_limit,
                        help="examples of the adversarial check (paper 003: 16; sentences too short for k >= 1 are "
                             "skipped)")
    parser.add_argument("--attack-steps", type=int, default=defaults.attack_steps,
                        help="most steps of each attack (the thesis: 500)")
    parser.add_argument("--attack-methods", default=None,
                        help=f"comma-separated methods the adversarial check attacks, from: "
                             f"{', '.join(ATTACKED_METHODS)} (default: every one among --methods)")
    parser.add_argument("--known-feature-model", action="append", default=[], metavar="MODEL=FOLDER",
                        help="the known-feature twin of a model that is not built in (repeat per model)")
    parser.add_argument("--known-feature-dataset", default=None,
                        help="dataset whose rationale marks the known feature (default: known-feature:dev:0)")
    parser.add_argument("--plausibility-dataset", default=None,
                        help="dataset with human rationales (default: --dataset when it has them)")
    parser.add_argument("--random-orderings", type=int, default=defaults.random_orderings)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    add_executor_flag(parser)
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=help_text("write the comparison to FILE (.json: everything; .csv: the rows)"))
    parser.add_argument("--json", action="store_true", help=help_text("print the comparison as JSON on stdout"))
    parser.set_defaults(handler=handle)


def config_from_args(args) -> mcd.ComparisonConfig:
    checks = tuple(c.strip() for c in args.checks.split(",") if c.strip())
    unknown = [c for c in checks if c not in mcd.CHECKS]
    if not checks or unknown:
        raise ParamError(f"--checks: unknown {', '.join(unknown) or '(none given)'}; choose from "
                         f"{', '.join(mcd.CHECKS)}.")
    sizes = {"limit": args.limit, "known_feature_limit": args.known_feature_limit or args.limit,
             "sanity_limit": args.sanity_limit or args.limit,
             "plausibility_limit": args.plausibility_limit or args.limit, "attack_limit": args.attack_limit,
             "attack_steps": args.attack_steps}
    bad = [name for name, value in sizes.items() if value < 1]
    if bad:
        raise ParamError(f"--{bad[0].replace('_', '-')} must be at least 1.")
    attacked = None
    if args.attack_methods is not None:
        attacked = tuple(m.strip() for m in args.attack_methods.split(",") if m.strip())
        wrong = [m for m in attacked if m not in ATTACKED_METHODS]
        if not attacked or wrong:
            raise ParamError(f"--attack-methods: choose from {', '.join(ATTACKED_METHODS)}"
                             + (f" (not {', '.join(wrong)})." if wrong else "."))
    return mcd.ComparisonConfig(checks=checks, **sizes, attack_methods=attacked, known_feature_dataset=args.known_feature_dataset,
                                plausibility_dataset=args.plausibility_dataset,
                                random_orderings=args.random_orderings, seed=args.seed, protocol=args.protocol)


def twins_from_args(values: list[str]) -> dict:
    twins = {}
    for value in values:
        model, sep, folder = value.partition("=")
        if not sep or not model.strip() or not folder.strip():
            raise ParamError(f"--known-feature-model {value}: write MODEL=FOLDER (the model, then its twin trained on "
                             f"the known-feature task).")
        twins[model.strip()] = folder.strip()
    return twins


def print_summary(comparison: mcd.Comparison) -> None:
    rows = comparison.rows
    print(f"Protocol: {comparison.protocol}. Checks: " + "; ".join(comparison.check_names.values()))
    for model in comparison.models:
        print(f"{model['model']}: {model['parameters'] / 1e6:.1f} M parameters, {model['blocks']} blocks, "
              f"{model['architecture']}")
    for metric in dict.fromkeys(rows["metric"]):
        part = rows[(rows["metric"] == metric) & rows["mean"].notna()]
        if not len(part):
            continue
        print(f"\n{mcd.METRIC_LABELS.get(metric, metric)} [{metric}]: mean [95 % CI]")
        text = part.assign(value=[f"{m:.3f} [{lo:.3f}, {hi:.3f}]" for m, lo, hi in
                                  zip(part["mean"], part["low"], part["high"])],
                           method=[label_for(m) for m in part["method"]])
        print(text.pivot_table(index="method", columns="model", values="value", aggfunc="first", sort=False)
              .to_string())
        reference = part.dropna(subset=["reference_low"]).groupby("model", sort=False)[
            ["reference_low", "reference_high"]].first()
        for model, band in reference.iterrows():
            print(f"  reference band on {model}: [{band['reference_low']:.3f}, {band['reference_high']:.3f}]")
    for reason in dict.fromkeys(rows["not_applicable"].dropna()):
        print(f"not applicable: {reason}")


def one_input_export(comparison: ModelComparison) -> dict:
    """A JSON-ready record of one input on several models: predictions, word scores, agreement per method."""
    agreement = {}
    for method in comparison.methods:
        result = comparison.agreement(method)
        if result is not None:
            # Agreement's rows name their row "method"; here each row is a model
            agreement[method] = [{"model": row.pop("method"), **row} for row in result.to_rows()]
    return {"models": [{"model": run.name, "prediction": run.prediction, "explained_class": run.labels[run.predicted],
                        "errors": run.errors} for run in comparison.runs],
            "rows": comparison.scores_frame().to_dict("records"), "agreement": agreement}


def print_one_input(comparison: ModelComparison) -> None:
    for run in comparison.runs:
        print(f"{run.name}: predicts {run.prediction}")
    scores = comparison.scores_frame()
    for method in comparison.methods:
        print(f"\n{label_for(method)}: word scores (each model explains its own predicted class)")
        part = scores[scores["method"] == method]
        if len(part):
            print(part.pivot_table(index=["word_index", "word"], columns="model", values="score", sort=False)
                  .round(4).to_string())
        for run in comparison.runs:
            if method in run.errors:
                print(f"  {run.errors[method]}")
        agreement = comparison.agreement(method)
        if agreement is not None:
            print("Agreement between models (Spearman of |scores|):")
            print(pd.DataFrame(agreement.to_rows()).rename(columns={"method": "model"}).round(3).to_string(index=False))


def handle_one_input(args, models: list[str], methods: list[str], out) -> int:
    if len(models) < 2:
        raise ParamError("--text compares models: give at least two in --models (comma-separated).")
    text = normalize_typed_text(args.text)
    pair = normalize_typed_text(args.pair) if args.pair is not None else None
    comparison = compare_models({m: load_classifier(m) for m in models}, text, pair, methods)
    data = one_input_export(comparison)
    if out:
        write_out(out, data, comparison.scores_frame())
    if args.json:
        print_json(data)
    else:
        print_one_input(comparison)
    return 0


def handle(args) -> int:
    out = check_out(args.out, OUT_FORMATS)
    methods = parse_method_specs(args.methods) if args.methods else default_methods()
    if args.text is not None:
        return handle_one_input(args, [m.strip() for m in args.models.split(",") if m.strip()], methods, out)
    config = config_from_args(args)
    twins = twins_from_args(args.known_feature_model)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for data in (args.dataset, config.known_feature_dataset, config.plausibility_dataset):
        if data:  # an unreadable file, or one that is no dataset, stops here: one line, no progress bar
            check_dataset_id(data)
    bar, progress = job_progress("compare models", "cell", len(models) * len(config.checks))

    try:
        comparison = mcd.run_comparison(models, args.dataset, methods, config, twins, executor=args.executor,
                                        progress=progress)
    finally:
        bar.close()
    data = mcd.export(comparison)
    if out:
        write_out(out, data, pd.DataFrame(data["rows"]))
    if args.json:
        print_json(data)
    else:
        print_summary(comparison)
    for where, error in comparison.errors.items():
        print(f"warning: {where} failed: {error}", file=sys.stderr)
    return 0
