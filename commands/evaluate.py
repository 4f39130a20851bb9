"""`cli.py evaluate`: any metrics x any methods over N examples of a dataset, with bootstrap 95 % CIs and the
random baseline, stored per example (a rerun of the same command resumes or reopens instantly).

    python cli.py evaluate --model default --dataset sst2:dev --limit 200 \
        --methods saliency,integrated_gradients:paper-003,leave_one_out --metrics eraser,deletion --out results.csv

``--metrics`` takes evaluator ids (``eraser``, ``eraser-official``, ``paper-002``, ``paper-003`` (signed, Def. 2.1 /
2.2), ``paper-003-code`` (mean |change|), ``paper-004``, ``paper-004-text`` (AOPC / |B|), ``deletion``,
``deletion-bert``, ``insertion``, ``decision-flip``, ``faithfulness`` = all removal metrics, ``operator-sweep``,
``known-feature``, ``plausibility``, ``shape``, ``agreement`` (between methods: pair rows "A vs B", --agreement-k,
--agreement-ranking), ...) or single metric ids; ``--list-metrics`` prints them.
"""
from __future__ import annotations

import sys
from pathlib import Path

from commands.common import (
    add_column_options,
    add_executor_flag,
    add_output_options,
    add_schema_flags,
    check_out,
    help_text,
    job_progress,
    parse_method_specs,
    print_json,
    schema_values,
    warn_failed,
    write_out,
)
from commands.documents import add_document_options, document_options_of
from corpora import DataError
from evaluation import targets
from evaluation.agreement.dataset import with_settings
from evaluation.baselines import MIN_ORDERINGS
from evaluation.faithfulness.curves import RemovalOptions
from evaluation.faithfulness.perturbation_shift import SCHEMES
from evaluation.faithfulness.perturbation_shift_run import accuracy_cell, start_accuracy_drop, stored_table
from evaluation.faithfulness.selection_bias import selection_warnings, with_selection_columns
from evaluation.metric import METRICS, RunOptions
from evaluation.plausibility.dataset import ERASER_OFFICIAL, eraser_official_table, micro_macro_report
from evaluation.plausibility.metrics import PRESETS as PLAUSIBILITY_PRESETS
from evaluation.plausibility.metrics import PlausibilityConfig
from evaluation.runs.jobs import run_cells
from evaluation.runs.store import CellsReadOnce

# these register the sanity metrics that --list-metrics prints
from evaluation.sanity import data_randomization, emprt, one_input, repeatability, smprt  # noqa: F401
from evaluation.suite import paper_targets
from evaluation.suite.registry import EVALUATORS, option_groups
from evaluation.suite.run_report import run_table, wide_table
from evaluation.suite.runner import run_evaluation
from evaluation.summary import random_orderings_frame, results_frame
from explainers import ParamError
from explainers.params import options_from
from models import OPERATORS, Operator, UserFacingError
from models.mlm import load_filler

SUMMARY_COLUMNS = ["method", "metric", "label", "direction", "mean", "low", "high", "n", "random_mean", "random_low",
                   "random_high", "diff_mean", "diff_low", "diff_high", "vs_random", "preset", "operator", "target",
                   "contrast", "special_tokens", "seed", "random_orderings", "agreement_k", "agreement_ranking", "model", "dataset",
                   "run_id", "tuned_for", "selection_warning"]
PLAUSIBILITY = "plausibility-"  # prefix of the plausibility metrics' flags (--plausibility-top-k ...)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="faithfulness / plausibility metrics of methods over a dataset")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    add_column_options(parser)  # --text-column / --label-column / --pair-column of a file: dataset
    parser.add_argument("--dataset", default="sst2:dev",
                        help="name:split (sst2:dev, eraser-movies:validation, known-feature:dev, ...) or file:PATH")
    parser.add_argument("--limit", type=int, default=200, help="first N examples (0 = all)")
    parser.add_argument("--methods", default="saliency,integrated_gradients,leave_one_out",
                        help="comma-separated method ids, optionally method:preset ('all' = every method)")
    parser.add_argument("--metrics", default="eraser", help="comma-separated evaluator or metric ids")
    add_schema_flags(parser, RunOptions)
    add_schema_flags(parser, RemovalOptions, skip=("exclude_special",))
    parser.add_argument("--count-special", action="store_true",  # = exclude_special false, said positively
                        help=help_text("count [CLS]/[SEP] in the fractions (papers 003/004); default: words only"))
    for options_class in option_groups():  # each evaluator's own: NAOPC's search, soft masks, F-Fidelity, agreement's k
        add_schema_flags(parser, options_class)
    parser.add_argument("--plausibility-preset", choices=list(PLAUSIBILITY_PRESETS), default=None,
                        help="settings of the plausibility metrics from a paper (the flags below override them)")
    add_schema_flags(parser, PlausibilityConfig, prefix=PLAUSIBILITY)
    add_document_options(parser)
    add_executor_flag(parser)
    parser.add_argument("--workers", type=int, default=None,
                        help="worker processes of --executor processes (default EXWB_RUN_WORKERS, else the cores)")
    add_output_options(parser, "the summary", csv="one row per method x metric",
                       json="the summary, the configuration and every per-example value")
    parser.add_argument("--per-example", metavar="FILE", default=None,
                        help="also write every per-example value to FILE (.csv or .json)")
    parser.add_argument("--list-metrics", action="store_true", help="list evaluators and metrics, then exit")
    parser.add_argument("--perturbation-shift", action="store_true",
                        help=help_text("instead of metrics: paper 000 Table 4, the accuracy drop when one word is "
                                       "deleted (LOO), replaced by the masked LM (IM) or many words are deleted "
                                       "(LIME's samples), on the dataset's first --limit examples"))
    parser.add_argument("--lime-samples", type=int, default=50,
                        help="LIME samples per input for --perturbation-shift (paper 000: LIME's 1,000)")
    parser.set_defaults(handler=handle)


def run_options(args) -> dict:
    """The run's options from the flags. The five keys every run stores are always there (the Faithfulness page
    stores the same, so the app and the command line share runs); the others only when given."""
    given = {**schema_values(args, RunOptions), **schema_values(args, RemovalOptions)}
    if args.count_special:
        given["exclude_special"] = False
    removal = options_from(RemovalOptions, given)
    run = options_from(RunOptions, given)
    options: dict[str, object] = {"target": run.target, "operator": removal.operator,
                                  "exclude_special": removal.exclude_special, "seed": run.seed,
                                  "random_orderings": run.random_orderings}
    options.update({k: given[k] for k in ("rank_by", "aopc_divisor", "contrast") if k in given})
    for options_class in option_groups():
        options.update(schema_values(args, options_class))
    options.update(document_options_of(args))  # long documents: windows, granularity (only when given)
    plausibility = schema_values(args, PlausibilityConfig, prefix=PLAUSIBILITY)
    if args.plausibility_preset or plausibility:
        options["plausibility"] = {"preset": args.plausibility_preset, **plausibility}
    return options


def list_metrics() -> int:
    for evaluator in EVALUATORS.values():
        print(f"{evaluator.id}: {evaluator.label}")
        for metric in evaluator.metrics:
            operator = f", operator {OPERATORS[Operator(metric.operator)].label}" if metric.operator else ""
            convention = metric.params.get("convention") if metric.params else None
            print(f"    {metric.id} {metric.arrow}  {metric.label}{operator}"
                  + (f"\n        convention: {convention}" if convention else ""))
    print("perturbation-shift: paper 000 Table 4, the accuracy drop when one word is deleted (loo), replaced by the "
          "masked LM (im) or LIME's samples delete many (lime), with 95 % CIs (run with `cli.py evaluate "
          "--perturbation-shift`; the Faithfulness page's 'Out of distribution' tab)")
    print("sanity: model-randomization and repeatability checks (run with `cli.py sanity`, e.g. "
          "--measures emprt,smprt,repeatability)")
    grouped = {m.id for e in EVALUATORS.values() for m in e.metrics}  # listed above with their group
    for metric in METRICS.values():
        if metric.family == "sanity" and metric.id not in grouped:
            print(f"    {metric.id} {metric.arrow}  {metric.label}")
    return 0


def perturbation_shift(args, out) -> int:
    """Paper 000 Table 4 for ``--model`` on ``--dataset``: printed, or written by the output convention. A stored
    run of one cell per input (shared with the Faithfulness page): an interrupted command resumes."""
    if args.lime_samples < 1:
        raise ParamError("--lime-samples must be at least 1.")
    if args.limit < 0:
        raise ParamError("--limit must be 0 (all) or a positive number.")
    schemes = list(SCHEMES)
    try:
        load_filler()
    except UserFacingError as error:
        schemes.remove("im")
        print(f"warning: no IM row: {error}", file=sys.stderr)
    store, run_id, cells = start_accuracy_drop(args.model, args.dataset, args.limit or None, schemes,
                                               args.lime_samples, run_options(args)["seed"])
    bar, progress = job_progress("perturbing", "example")
    try:
        summary = run_cells(store, run_id, cells, accuracy_cell, progress=progress)
    finally:
        bar.close()
    warn_failed(summary, "the table")
    table = stored_table(store, run_id)
    if table is None:
        raise DataError("No example has a gold label and at least one word; the accuracy drop needs labelled "
                        "examples.")
    if out:
        write_out(out, table.to_dict(orient="records"), table)
    if args.json:
        print_json({"model": args.model, "dataset": args.dataset, "run_id": run_id,
                    "table": table.to_dict(orient="records")})
        return 0
    print(f"Accuracy drop per perturbation (paper 000 Table 4; {args.model} on {args.dataset}, "
          f"{int(table['n_inputs'].iloc[0])} labelled inputs, each input weighs the same; run {run_id})")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return 0


def handle(args) -> int:
    if args.list_metrics:
        return list_metrics()
    out = check_out(args.out)
    if args.perturbation_shift:
        return perturbation_shift(args, out)
    per_example = check_out(args.per_example)
    if args.limit < 0:
        raise ParamError("--limit must be 0 (all) or a positive number.")
    methods = parse_method_specs(args.methods)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not metrics:
        raise ParamError("No metrics given; pass --metrics (see --list-metrics).")
    options = run_options(args)
    if "target" not in {**schema_values(args, RunOptions), **schema_values(args, RemovalOptions)}:
        try:
            options["target"] = paper_targets.default_target(metrics)  # paper 002 alone: its gold label
        except KeyError as error:  # unknown metric or group
            raise ParamError(str(error).strip("'\"")) from None
    for metric in paper_targets.differing(metrics, options["target"]):
        print(f"note: {metric} reads the gold label in paper 002 (Eq. 10-11); this run measures the "
              f"{targets.label(options['target'])} (one target per run; --target gold for the paper's)",
              file=sys.stderr)
    if 0 < options["random_orderings"] < MIN_ORDERINGS:
        raise ParamError(f"--random-orderings must be 0 or at least {MIN_ORDERINGS} (a band needs enough orderings).")
    if args.workers is not None and args.workers < 1:
        raise ParamError("--workers must be at least 1.")
    bar, progress = job_progress("evaluating", "example")

    try:
        store, summary = run_evaluation(args.model, args.dataset, methods, metrics, limit=args.limit or None,
                                        options=options, executor=args.executor, progress=progress,
                                        workers=args.workers)
    except KeyError as error:  # unknown metric or group
        raise ParamError(str(error).strip("'\"")) from None
    finally:
        bar.close()
    warn_failed(summary, "the summary")
    if summary.errors and len(summary.errors) == summary.total:
        raise UserFacingError(f"Every example failed: {next(iter(summary.errors.values()))}")
    store = CellsReadOnce(store.path)  # the tables below read the finished run's cells once, not once each
    table = run_table(store, summary.run_id)
    if table.empty:
        raise UserFacingError(f"No metric applied to any example of {args.dataset}: known-feature needs the "
                              f"known-feature dataset, plausibility needs human rationales (see --list-metrics).")
    for message in selection_warnings(methods, table["metric"].unique()):  # AML scored on its own metric
        print(f"warning: {message}", file=sys.stderr)
    table = with_settings(table, options)  # agreement's k and ranking on its rows
    columns = [c for c in SUMMARY_COLUMNS if c in table.columns]
    table = table[columns]
    if out:
        write_summary(out, table, store, summary.run_id)
    if per_example:
        each = with_selection_columns(results_frame(store, summary.run_id))
        write_out(per_example, each.to_dict(orient="records"), each)
    if args.json:
        print_json({"run_id": summary.run_id, "summary": table.to_dict(orient="records")})
        return 0
    print(f"run {summary.run_id}: {summary.done}/{summary.total} examples ({summary.status}); "
          f"{args.model} on {args.dataset}; target {options['target']}; "
          + (f"contrast {options['contrast']} (s(target) - s(contrast)); " if options.get("contrast") is not None else "")
          + f"operator {options['operator'] or 'per preset'}; seed {options['seed']}; random baseline: "
          f"{options['random_orderings']} orderings per example")
    print(wide_table(table).to_string())
    if table["metric"].isin(["plaus_iou_precision", "plaus_auprc_trapezoid"]).any():
        official = eraser_official_table(results_frame(store, summary.run_id))
        print("\nERASER's official script (rationale_benchmark/metrics.py): " + "; ".join(ERASER_OFFICIAL.values()))
        print(official.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if table["metric"].eq("plaus_token_f1_topk").any():
        micro = micro_macro_report(store, summary.run_id)
        print("\nMacro and micro token F1 at top-k (paper 004 Table 3; micro pools every token decision):")
        print(micro.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if "vs_random" in table and len(flagged := table[table["vs_random"] == "not distinguishable from random"]):
        print("\n≈ random: the paired bootstrap 95 % CI of (method - random baseline) contains 0 for: " +
              "; ".join(f"{r.method} / {r.label}" for r in flagged.itertuples()))
    return 0


def write_summary(path: Path, table, store, run_id: str) -> None:
    """.csv: the summary table; .json: the run, the metrics' metadata, the summary and every per-example value."""
    data = {"run": store.get_run(run_id), "metrics": {m: METRICS[m].to_dict() for m in table["metric"].unique()
                                                     if m in METRICS},
            "summary": table.to_dict(orient="records"),
            "per_example": with_selection_columns(results_frame(store, run_id)).to_dict(orient="records"),
            "random_orderings": random_orderings_frame(store, run_id).to_dict(orient="records")}
    write_out(path, data, table)
