"""`cli.py evaluate`: any metrics x any methods over N examples of a dataset, with bootstrap 95 % CIs and the
random baseline, stored per example (a rerun of the same command resumes or reopens instantly).

    python cli.py evaluate --model default --dataset sst2:dev --limit 200 \
        --methods saliency,integrated_gradients:paper-003,leave_one_out --metrics eraser,deletion --out results.csv

``--metrics`` takes evaluator ids (``eraser``, ``paper-002``, ``paper-003``, ``paper-004``, ``deletion``,
``deletion-bert``, ``insertion``, ``decision-flip``, ``faithfulness`` = all removal metrics, ``operator-sweep``,
``known-feature``, ``plausibility``, ...) or single metric ids; ``--list-metrics`` prints them.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from tqdm import tqdm

from explainers import REGISTRY, ParamError
from models import OPERATORS, Operator, UserFacingError
from evaluation.runs.runner import (load_evaluators, parse_method, random_orderings_frame, results_frame,
                                    run_evaluation)
from evaluation import targets
from evaluation.faithfulness.random_band import MIN_ORDERINGS
from evaluation.faithfulness.report import run_table, wide_table
from evaluation.metric import METRICS

from commands.common import print_json

SUMMARY_COLUMNS = ["method", "metric", "label", "direction", "mean", "low", "high", "n", "random_mean", "random_low",
                   "random_high", "diff_mean", "diff_low", "diff_high", "vs_random", "preset", "operator", "target",
                   "special_tokens", "seed", "random_orderings", "model", "dataset", "run_id"]


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("evaluate", help="faithfulness / plausibility metrics of methods over a dataset")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--dataset", default="sst2:dev",
                        help="name:split (sst2:dev, eraser-movies:validation, known-feature:dev, ...) or file:PATH")
    parser.add_argument("--limit", type=int, default=200, help="first N examples (0 = all)")
    parser.add_argument("--methods", default="saliency,integrated_gradients,leave_one_out",
                        help="comma-separated method ids, optionally method:preset ('all' = every method)")
    parser.add_argument("--metrics", default="eraser", help="comma-separated evaluator or metric ids")
    parser.add_argument("--target", type=targets.cli_choice, default=targets.PREDICTED, help=targets.HELP,
                        metavar="{predicted,gold,CLASS}")
    parser.add_argument("--operator", choices=[op.value for op in Operator], default=None,
                        help="removal operator for every removal metric (default: each preset's own)")
    parser.add_argument("--count-special", action="store_true",
                        help="count [CLS]/[SEP] in the fractions (papers 003/004); default: words only")
    parser.add_argument("--seed", type=int, default=0, help="tie-breaking and random-baseline seed")
    parser.add_argument("--random-orderings", type=int, default=10,
                        help=f"random orderings per example for the baseline (>= {MIN_ORDERINGS}; 0 = none)")
    parser.add_argument("--executor", choices=("local", "ray"), default="local")
    parser.add_argument("--out", default=None, help="write the summary: .csv (one row per method x metric) or .json "
                                                    "(summary, configuration and every per-example value)")
    parser.add_argument("--per-example", default=None, help="also write every per-example value to this CSV")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.add_argument("--list-metrics", action="store_true", help="list evaluators and metrics, then exit")
    parser.set_defaults(handler=handle)


def parse_method_specs(value: str) -> list[str]:
    """'all' or comma-separated ``method`` / ``method:preset``; unknown ones raise ParamError."""
    if value.strip() == "all":
        return list(REGISTRY)
    specs = [m.strip() for m in value.split(",") if m.strip()]
    if not specs:
        raise ParamError("No methods given; pass --methods with method ids (see `cli.py methods`).")
    for spec in specs:
        method, preset = parse_method(spec)
        if method not in REGISTRY:
            raise ParamError(f"Unknown method '{method}'. Known: {', '.join(REGISTRY)}.")
        if preset is not None and preset not in REGISTRY[method].presets:
            raise ParamError(f"Unknown preset '{preset}' for {method}; presets: "
                             f"{', '.join(REGISTRY[method].presets) or 'none'}.")
    return specs


def list_metrics() -> int:
    evaluators = load_evaluators()
    for evaluator in evaluators.values():
        print(f"{evaluator.id}: {evaluator.label}")
        for metric in evaluator.metrics:
            operator = f", operator {OPERATORS[Operator(metric.operator)].label}" if metric.operator else ""
            print(f"    {metric.id} {metric.arrow}  {metric.label}{operator}")
    return 0


def handle(args) -> int:
    if args.list_metrics:
        return list_metrics()
    if args.limit < 0:
        raise ParamError("--limit must be 0 (all) or a positive number.")
    if 0 < args.random_orderings < MIN_ORDERINGS:
        raise ParamError(f"--random-orderings must be 0 or at least {MIN_ORDERINGS} (a band needs enough orderings).")
    methods = parse_method_specs(args.methods)
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if not metrics:
        raise ParamError("No metrics given; pass --metrics (see --list-metrics).")
    options = {"target": args.target, "operator": args.operator, "exclude_special": not args.count_special,
               "seed": args.seed, "random_orderings": args.random_orderings}
    bar = tqdm(total=None, desc="evaluating", unit="example", file=sys.stderr)

    def progress(done: int, total: int, eta: float | None) -> None:
        bar.total = total
        bar.update(done - bar.n)

    try:
        store, summary = run_evaluation(args.model, args.dataset, methods, metrics, limit=args.limit or None,
                                        options=options, executor=args.executor, progress=progress)
    except KeyError as error:  # unknown metric or group
        raise ParamError(str(error).strip("'\"")) from None
    finally:
        bar.close()
    if summary.errors:
        first_key, first_error = next(iter(summary.errors.items()))
        print(f"warning: {len(summary.errors)} of {summary.total} examples failed (first, {first_key}: {first_error}); "
              f"they are left out of the summary and rerun next time.", file=sys.stderr)
        if len(summary.errors) == summary.total:
            raise UserFacingError(f"Every example failed: {first_error}")
    table = run_table(store, summary.run_id)
    if table.empty:
        raise UserFacingError(f"No metric applied to any example of {args.dataset}: known-feature needs the "
                              f"known-feature dataset, plausibility needs human rationales (see --list-metrics).")
    columns = [c for c in SUMMARY_COLUMNS if c in table.columns]
    table = table[columns]
    if args.out:
        write_summary(Path(args.out), table, store, summary.run_id)
    if args.per_example:
        results_frame(store, summary.run_id).to_csv(args.per_example, index=False)
    if args.json:
        print_json({"run_id": summary.run_id, "summary": table.to_dict(orient="records")})
        return 0
    print(f"run {summary.run_id}: {summary.done}/{summary.total} examples ({summary.status}); "
          f"{args.model} on {args.dataset}; target {args.target}; "
          f"operator {args.operator or 'per preset'}; seed {args.seed}; random baseline: {args.random_orderings} "
          f"orderings per example")
    print(wide_table(table).to_string())
    flagged = table[table.get("vs_random", "") == "not distinguishable from random"] if "vs_random" in table else []
    if len(flagged):
        print("\n≈ random: the paired bootstrap 95 % CI of (method - random baseline) contains 0 for: " +
              "; ".join(f"{r.method} / {r.label}" for r in flagged.itertuples()))
    return 0


def write_summary(path: Path, table, store, run_id: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".json":
        data = {"run": store.get_run(run_id), "metrics": {m: METRICS[m].to_dict() for m in table["metric"].unique()
                                                         if m in METRICS},
                "summary": table.to_dict(orient="records"),
                "per_example": results_frame(store, run_id).to_dict(orient="records"),
                "random_orderings": random_orderings_frame(store, run_id).to_dict(orient="records")}
        path.write_text(json.dumps(data, indent=2, default=str))
    else:
        table.to_csv(path, index=False)
    print(f"wrote {path}", file=sys.stderr)
