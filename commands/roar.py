"""`cli.py roar`: a ROAR / Recursive ROAR study (retraining-based faithfulness) on this machine or a Ray cluster.

    python cli.py roar --model default --dataset sst2 --measures ig,lime,loo,attention --ratios 10,20,30 \\
        --seeds 1 --variant head --executor local
    python cli.py roar --preset paper-001-quick          # paper 001's masking, a new head on 300 sentences
    python cli.py roar --preset paper-001 --executor ray --ray-address auto   # the paper's protocol: hours
    python cli.py roar ... --estimate          # retrains and time, then exit
    python cli.py roar ... --out study.csv     # the accuracy curves (.json: curves, scores and p-values)
    python cli.py roar --preset paper-001-one-token-quick   # paper 001 App. F: one word per step (quick head)
    python cli.py roar --step-tokens 1 --measures loo # the same exact 'count' strategy for any study
    python cli.py roar --synthetic --seeds 5   # paper 001 s. 3.3: ROAR vs Recursive ROAR vs ground truth
    python cli.py roar --list                  # stored studies
    python cli.py roar --export RUN_ID --out study.json ; python cli.py roar --import study.json

A study resumes from its finished cells when the same command runs again (Ctrl-C stops it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from commands.common import (
    add_column_options,
    add_executor_flag,
    add_output_options,
    add_schema_flags,
    check_out,
    emit,
    help_text,
    parse_method_options,
    ray_resources,
    run_resumable,
    schema_values,
    write_out,
)
from evaluation.roar import scores as roar_scores
from evaluation.roar.config import FULL_RATIOS, StudyConfig
from evaluation.roar.cost import estimate
from evaluation.roar.measures import SETTINGS
from evaluation.roar.presets import PRESETS
from evaluation.roar.study import KIND, build_config, prepare_study, roar_cell
from evaluation.roar.synthetic import synthetic_study
from evaluation.roar.training import Variant
from evaluation.runs import ray_executor
from evaluation.runs.store import ResultStore
from evaluation.seeds import parse_seeds
from explainers import ParamError
from explainers.params import options_from, schema
from models import UserFacingError

DEFAULT_MEASURES = ("ig", "lime", "loo", "attention")
VARIANT_FLAGS = {"trainable": "variant"}  # Variant.trainable is --variant on the command line


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("roar", help="ROAR / Recursive ROAR: mask the top words, retrain, measure accuracy",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=list(PRESETS),
                        help=help_text("; ".join(f"{k}: {v['description']}" for k, v in PRESETS.items())))
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    add_column_options(parser)  # --text-column / --label-column / --pair-column of a file: dataset
    parser.add_argument("--dataset", default="sst2", help="dataset name: trains on its train split, tests on dev")
    parser.add_argument("--train-data", help="dataset id to retrain on (e.g. sst2:train, file:/path.csv)")
    parser.add_argument("--test-data", help="dataset id to test on (e.g. sst2:dev)")
    parser.add_argument("--measures", default=None,
                        help="comma-separated explainer ids or aliases (ig, loo, lime, attention, gradient, ixg, ...), "
                             "optionally id:preset; random is always added (default: " + ",".join(DEFAULT_MEASURES) +
                             ")")
    parser.add_argument("--param", action="append", metavar="MEASURE.NAME=VALUE", help="set a measure's parameter")
    parser.add_argument("--settings", choices=SETTINGS, default=None,
                        help="measure settings: cheap (CPU default: IG 10 steps, LIME 50 samples) or the papers'")
    parser.add_argument("--ratios", default=None, help=help_text("masking percentages, e.g. 10,20,30 (default 10..90; "
                                                                 "the 0 % and 100 % models are added as shared "
                                                                 "anchors)"))
    parser.add_argument("--step-tokens", type=int, default=None, metavar="K",
                        help=help_text("remove exactly K more words per step, recursively (paper 001 App. F, the "
                                       "'count' strategy; K = 1 is the exact Recursive ROAR): steps K, 2K, ..., 10K "
                                       "words (or --ratios as word counts), Recursive ROAR unless --mode says "
                                       "otherwise, no 0 % / 100 % anchors"))
    parser.add_argument("--synthetic", action="store_true",
                        help=help_text("paper 001 s. 3.3 instead of a study: the synthetic redundant-feature problem, "
                                       "ROAR vs Recursive ROAR vs ground truth vs worst case over --seeds drawn "
                                       "problems (default 5), and the paper's Fig. 3 statements checked"))
    parser.add_argument("--seeds", default=None, help="a number of seeds (3 = seeds 0,1,2) or a list '0,4,7' "
                                                      "(default 3 on a CPU, 5 on a GPU)")
    add_schema_flags(parser, StudyConfig)
    add_schema_flags(parser, Variant, rename=VARIANT_FLAGS)
    add_executor_flag(parser)
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (auto, host:port, ray://...); empty "
                                                            "= a local Ray instance")
    parser.add_argument("--estimate", action="store_true", help="print the retrains and estimated time, then exit")
    add_output_options(parser, "the results", csv="the accuracy and macro-F1 curves",
                       json="curves, scores and p-values; with --export, the whole study")
    parser.add_argument("--store", default=None, help="result store (SQLite) path; default under the cache folder")
    parser.add_argument("--list", action="store_true", help="list stored ROAR studies")
    parser.add_argument("--show", metavar="RUN_ID", help="print the results of a stored study")
    parser.add_argument("--export", metavar="RUN_ID", help="write a stored study as JSON to --out FILE.json (default: "
                                                            "stdout)")
    parser.add_argument("--import", dest="import_path", metavar="FILE", help="import an exported study")
    parser.set_defaults(handler=handle)


def parse_ratios(value: str | None):
    if value is None:
        return None
    if value.strip() in ("all", "full"):
        return FULL_RATIOS
    try:
        ratios = [float(v) for v in value.split(",") if v.strip()]
    except ValueError as error:
        raise ParamError(f"--ratios expects percentages like 10,20,30; got {value!r}.") from error
    if not ratios or any(not 0 <= r <= 100 for r in ratios):
        raise ParamError(f"--ratios must be percentages between 0 and 100; got {value!r}.")
    return ratios


def config_from_args(args):
    """The study from the flags: a preset's values, overridden by every flag given."""
    preset = dict(PRESETS[args.preset]) if args.preset else {}
    study_options = {spec.name for spec in schema(StudyConfig)}
    study = {k: v for k, v in {**preset, **schema_values(args, StudyConfig)}.items() if k in study_options}
    variant = options_from(Variant, {**preset, **schema_values(args, Variant)})  # a preset may set "trainable"
    measures = args.measures.split(",") if args.measures else list(preset.get("measures", DEFAULT_MEASURES))
    _, overrides = parse_method_options(None, args.param)
    ratios = parse_ratios(args.ratios)
    if args.step_tokens is not None:
        if args.step_tokens < 1:
            raise ParamError(f"--step-tokens must be 1 or more words; got {args.step_tokens}.")
        study = {"mode": "recursive", "anchors": False, **study, "count_rule": "tokens"}
        if ratios is None:
            ratios = [args.step_tokens * i for i in range(1, 11)]
    seeds = parse_seeds(args.seeds, name="--seeds", count=True) if args.seeds is not None else None
    return build_config(
        model=args.model, dataset=args.dataset, train_data=args.train_data, test_data=args.test_data,
        measures=measures, ratios=ratios if ratios is not None else preset.get("ratios"),
        seeds=seeds if seeds is not None else preset.get("seeds"),
        settings=args.settings or preset.get("settings", "cheap"), measure_params=overrides, variant=variant,
        **study)


def _store(args):
    return ResultStore(args.store) if args.store else ResultStore()


def report(store, run_id: str) -> dict:
    """Curves, scores and p-values of a study as plain data."""
    run = store.get_run(run_id)
    frame = roar_scores.cells_frame(store.cells(run_id))
    failed = {k: v["error"] for k, v in store.cells(run_id).items() if "error" in v}
    out = {"run": {k: run[k] for k in ("id", "title", "status", "done", "total")},
           "provenance": run["meta"].get("provenance", {}), "failed_cells": failed}
    for metric in ("accuracy", "macro_f1"):
        out[metric] = {
            "curves": roar_scores.curves(frame, metric).drop(columns=["values"]).to_dict("records"),
            "scores": roar_scores.summary(frame, metric).to_dict("records"),
            "welch": roar_scores.welch_table(frame, metric).to_dict("records"),
        }
    return out


def print_report(data: dict) -> None:
    run, provenance = data["run"], data["provenance"]
    print(f"\n{run['title']}\nrun {run['id']}: {run['status']}, {run['done']}/{run['total']} cells")
    print("provenance: " + "; ".join(f"{k}: {v}" for k, v in provenance.items()))
    curves = data["accuracy"]["curves"]
    for mode in dict.fromkeys(c["mode"] for c in curves):
        print(f"\n{'ROAR' if mode == 'roar' else 'Recursive ROAR'}: test accuracy (mean [95 % CI] over seeds)")
        ratios = sorted({c["ratio"] for c in curves if c["mode"] == mode})
        print(f"{'measure':14s}" + "".join(f"{r:>20g}%" for r in ratios))
        for measure in dict.fromkeys(c["measure"] for c in curves if c["mode"] == mode):
            cells = {c["ratio"]: c for c in curves if c["mode"] == mode and c["measure"] == measure}
            line = "".join(f"{cells[r]['mean']:>8.3f} [{cells[r]['low']:.3f},{cells[r]['high']:.3f}]"
                           if r in cells else f"{'-':>21s}" for r in ratios)
            print(f"{measure:14s}{line}")
    scores = data["accuracy"]["scores"]
    if scores:
        print("\nfaithfulness (paper 001 Eq. 3, relative area between the curve and random; higher = more faithful)")
        for s in scores:
            leak = (f"  LEAKAGE: {s['leakage']}" if s["leakage_significant"] else f"  rises: {s['leakage']}") \
                if s["leakage"] else ""
            score = (f"{s['score']:+.1%} [{s['low']:+.1%}, {s['high']:+.1%}] ({s['seeds']} seeds) "
                     if s["seeds"] else "")  # no score: the verdict says why (no 100 % floor, too few seeds)
            print(f"  {s['mode']:9s} {s['measure']:14s} {score}{s['verdict']}{leak}")
    welch = [w for w in data["accuracy"]["welch"] if w["n_a"] >= 2 and w["n_b"] >= 2]
    if welch:
        print("\nWelch t-test p-values (paper 000 Table 2d)")
        for w in welch:
            print(f"  {w['mode']:9s} {w['ratio']:g}%  {w['measure_a']} vs {w['measure_b']}: p = {w['p_value']:.4f}")
    if data["failed_cells"]:
        print(f"\n{len(data['failed_cells'])} cells failed (run the command again to retry them):")
        for key, error in list(data["failed_cells"].items())[:5]:
            print(f"  {key}: {error}")


def curves_table(data: dict) -> pd.DataFrame:
    """The accuracy and macro-F1 curves of a report as one table (the CSV form of ``--out``)."""
    frames = [pd.DataFrame(data[metric]["curves"]).assign(metric=metric) for metric in ("accuracy", "macro_f1")]
    table = pd.concat(frames, ignore_index=True)
    return table[["metric"] + [c for c in table.columns if c != "metric"]]


def show(data: dict, args, out: Path | None) -> None:
    """A study's results by the output convention: --out FILE, --json, else the printed report."""
    if not emit(data, curves_table(data), args, out):
        print_report(data)


def synthetic_table(data: dict) -> pd.DataFrame:
    """The synthetic study's per-seed curves (the CSV form of ``--out``)."""
    return pd.DataFrame(data["rows"], columns=["seed", "strategy", "removed", "accuracy"])


def print_synthetic(data: dict) -> None:
    print(f"Paper 001 s. 3.3 synthetic problem: {data['problem']['n_features']} features, "
          f"{data['problem']['n_informative']} informative and redundant; importance = |linear weights|; "
          f"{len(data['seeds'])} drawn problems (seeds {', '.join(map(str, data['seeds']))})")
    print("\ntest accuracy after k features removed (mean over seeds)")
    n = len(next(iter(data["curves"].values())))
    print(f"{'strategy':14s}" + "".join(f"{k:>6d}" for k in range(n)))
    for strategy, curve in data["curves"].items():
        print(f"{strategy:14s}" + "".join(f"{a:6.3f}" for a in curve))
    print("\npaper 001 Fig. 3 says            | ours")
    for check in data["checks"]:
        values = ", ".join(f"{v:+.4f}" for v in check["per_seed"])
        print(f"  {check['claim']}: holds on {check['holds_on']}/{check['seeds']} seeds ({check['measured']}: "
              f"{values})")


def handle_synthetic(args, out) -> int:
    seeds = parse_seeds(args.seeds, name="--seeds", count=True) if args.seeds is not None else (0, 1, 2, 3, 4)
    data = synthetic_study(seeds)
    if not emit(data, synthetic_table(data), args, out):
        print_synthetic(data)
    return 0


def handle(args) -> int:
    out = check_out(args.out, (".json",) if args.export else (".csv", ".json"))
    if args.synthetic:
        return handle_synthetic(args, out)
    store = _store(args)
    if args.list:
        for run in store.list_runs(KIND):
            print(f"{run['id']}  {run['status']:22s} {run['done']:4d}/{run['total']:<4d} {run['title']}")
        return 0
    if args.import_path:
        try:
            data = json.loads(Path(args.import_path).read_text())
            run_id = store.import_run(data)
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise UserFacingError(f"Cannot import '{args.import_path}': {error}") from error
        print(f"imported {run_id}", file=sys.stderr)
        args.show = run_id
    if args.export:
        try:
            data = store.export_run(args.export)
        except KeyError as error:
            raise UserFacingError(str(error).strip("'\"")) from error
        if out:
            write_out(out, data)
        else:
            print(json.dumps(data, indent=1, default=str))
        return 0
    if args.show:
        if store.get_run(args.show) is None:
            raise UserFacingError(f"No study '{args.show}' in {store.path}; see `cli.py roar --list`.")
        show(report(store, args.show), args, out)
        return 0

    config = config_from_args(args)
    cost = estimate(config)
    counts = cost["retrains"]
    minutes = cost["total_seconds"] / 60
    duration = f"{minutes / 60:.1f} hours" if minutes > 120 else f"{minutes:.0f} min"
    print(f"{counts['total']} retrains ({counts['formula']}); about {duration} on "
          f"{cost['device']} ({cost['seconds_per_retrain']:.0f} s per retrain, importance "
          f"{sum(cost['importance_seconds'].values()) / 60:.1f} min); variant: {config.variant.label()}", file=sys.stderr)
    if args.estimate:
        return 0
    store, run_id, cells = prepare_study(config, store)
    resources = ray_resources(args)
    try:
        summary = run_resumable(store, run_id, cells, roar_cell, "ROAR cells", "retrain",
                                "the finished cells are kept. Run the same command again to resume",
                                executor=args.executor, ray_address=args.ray_address, ray_resources=resources)
    finally:
        if args.executor == "ray":
            ray_executor.shutdown()
    if summary is None:
        return 130
    show(report(store, run_id), args, out)
    return 0 if not summary.errors else 1
