"""`cli.py roar`: a ROAR / Recursive ROAR study (retraining-based faithfulness) on this machine or a Ray cluster.

    python cli.py roar --model default --dataset sst2 --measures ig,lime,loo,attention --ratios 10,20,30 \\
        --seeds 1 --variant head --executor local
    python cli.py roar --preset paper-001 --executor ray --ray-address auto
    python cli.py roar ... --estimate          # retrains and time, then exit
    python cli.py roar --list                  # stored studies
    python cli.py roar --export RUN_ID --output study.json ; python cli.py roar --import study.json

A study resumes from its finished cells when the same command runs again (Ctrl-C stops it).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from explainers import ParamError
from models import UserFacingError

from commands.common import parse_method_options, print_json

EXECUTORS = ("local", "ray")


def add_parser(subparsers) -> None:
    from evaluation.roar.masking import COUNT_RULES, RANKINGS, SEGMENTS
    from evaluation.roar.study import MODES, PRESETS, TARGETS
    from evaluation.roar.training import INITS, TRAINABLE

    parser = subparsers.add_parser("roar", help="ROAR / Recursive ROAR: mask the top words, retrain, measure accuracy",
                                   description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=list(PRESETS), help="; ".join(f"{k}: {v['description']}"
                                                                       for k, v in PRESETS.items()))
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--dataset", default="sst2", help="dataset name: trains on its train split, tests on dev")
    parser.add_argument("--train-data", help="dataset id to retrain on (e.g. sst2:train, file:/path.csv)")
    parser.add_argument("--test-data", help="dataset id to test on (e.g. sst2:dev)")
    parser.add_argument("--measures", default=None,
                        help="comma-separated explainer ids or aliases (ig, loo, lime, attention, gradient, ixg, ...), "
                             "optionally id:preset; random is always added (default: ig,lime,loo,attention)")
    parser.add_argument("--param", action="append", metavar="MEASURE.NAME=VALUE", help="set a measure's parameter")
    parser.add_argument("--settings", choices=("cheap", "paper"), default=None,
                        help="measure settings: cheap (CPU default: IG 10 steps, LIME 50 samples) or the papers'")
    parser.add_argument("--ratios", default=None, help="masking percentages, e.g. 10,20,30 (default 10..90; the 0 %% "
                                                       "and 100 %% models are added as shared anchors)")
    parser.add_argument("--seeds", default=None, help="a number of seeds (3 = seeds 0,1,2) or a list '0,4,7' "
                                                      "(default 3 on a CPU, 5 on a GPU)")
    parser.add_argument("--mode", choices=list(MODES), default=None, help="; ".join(f"{k}: {v}" for k, v in MODES.items()))
    parser.add_argument("--operator", default=None, help="removal operator: mask (paper 001), delete (paper 000), "
                                                         "mlm (ROAR-BERT), unk, pad")
    parser.add_argument("--target", choices=list(TARGETS), default=None, help="the label explained")
    parser.add_argument("--rank-by", choices=list(RANKINGS), default=None)
    parser.add_argument("--count-rule", choices=list(COUNT_RULES), default=None)
    parser.add_argument("--segments", choices=list(SEGMENTS), default=None)
    parser.add_argument("--no-anchors", action="store_true", help="leave out the shared 0 %% / 100 %% models")
    parser.add_argument("--variant", choices=list(TRAINABLE), default=None,
                        help="retraining: " + "; ".join(f"{k}: {v}" for k, v in TRAINABLE.items()) + " (default head)")
    parser.add_argument("--last-k", type=int, default=2, help="blocks trained by the last-k variant")
    parser.add_argument("--train-size", type=int, default=None, help="training subset N (default 300)")
    parser.add_argument("--test-size", type=int, default=None, help="test subset (default 200)")
    parser.add_argument("--epochs", type=float, default=None)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--batch-size", type=int, default=None)
    parser.add_argument("--init", choices=list(INITS), default=None, help="start point of every retrain")
    parser.add_argument("--executor", choices=EXECUTORS, default="local")
    parser.add_argument("--ray-address", default=None, help="Ray cluster address (auto, host:port, ray://...); empty "
                                                            "= a local Ray instance")
    parser.add_argument("--ray-cpus", type=float, default=1.0, help="CPUs per cell on Ray")
    parser.add_argument("--ray-gpus", type=float, default=0.0, help="GPUs per cell on Ray (e.g. 1)")
    parser.add_argument("--estimate", action="store_true", help="print the retrains and estimated time, then exit")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--store", default=None, help="result store (SQLite) path; default under the cache folder")
    parser.add_argument("--list", action="store_true", help="list stored ROAR studies")
    parser.add_argument("--show", metavar="RUN_ID", help="print the results of a stored study")
    parser.add_argument("--export", metavar="RUN_ID", help="write a stored study as JSON (see --output)")
    parser.add_argument("--output", default=None, help="file for --export (default: stdout)")
    parser.add_argument("--import", dest="import_path", metavar="FILE", help="import an exported study")
    parser.set_defaults(handler=handle)


def parse_ratios(value: str | None):
    if value is None:
        return None
    if value.strip() in ("all", "full"):
        from evaluation.roar.study import FULL_RATIOS

        return FULL_RATIOS
    try:
        ratios = [float(v) for v in value.split(",") if v.strip()]
    except ValueError as error:
        raise ParamError(f"--ratios expects percentages like 10,20,30; got {value!r}.") from error
    if not ratios or any(not 0 <= r <= 100 for r in ratios):
        raise ParamError(f"--ratios must be percentages between 0 and 100; got {value!r}.")
    return ratios


def parse_seeds(value: str | None):
    if value is None:
        return None
    value = value.strip()
    try:
        if "," in value:
            seeds = [int(v) for v in value.split(",") if v.strip()]
        else:
            seeds = list(range(int(value)))
    except ValueError as error:
        raise ParamError(f"--seeds expects a count (3) or a list (0,1,2); got {value!r}.") from error
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ParamError(f"--seeds needs at least one seed, all distinct and >= 0; got {value!r}.")
    return seeds


def config_from_args(args):
    from evaluation.roar.study import PRESETS, build_config
    from evaluation.roar.training import Variant

    preset = dict(PRESETS[args.preset]) if args.preset else {}

    def pick(name, default):
        value = getattr(args, name, None)
        return value if value is not None else preset.get(name, default)

    measures = args.measures.split(",") if args.measures else list(preset.get("measures", ("ig", "lime", "loo",
                                                                                        "attention")))
    _, overrides = parse_method_options(None, args.param)
    variant = Variant(trainable=pick("variant", preset.get("trainable", "head")), last_k=args.last_k,
                      train_size=pick("train_size", 300), test_size=pick("test_size", 200),
                      epochs=pick("epochs", 3.0), lr=args.lr, batch_size=pick("batch_size", 16),
                      init=pick("init", "classifier"))
    ratios = parse_ratios(args.ratios)
    seeds = parse_seeds(args.seeds)
    return build_config(
        model=args.model, dataset=args.dataset, train_data=args.train_data, test_data=args.test_data,
        measures=measures, ratios=ratios if ratios is not None else preset.get("ratios"),
        seeds=seeds if seeds is not None else preset.get("seeds"), mode=pick("mode", "roar"),
        operator=pick("operator", "mask"), target=pick("target", "predicted"), rank_by=pick("rank_by", "signed"),
        count_rule=pick("count_rule", "floor"), segments=pick("segments", "first"), anchors=not args.no_anchors,
        settings=pick("settings", "cheap"), measure_params=overrides, variant=variant)


def _store(args):
    from evaluation.runs.store import ResultStore

    return ResultStore(args.store) if args.store else ResultStore()


def report(store, run_id: str) -> dict:
    """Curves, scores and p-values of a study as plain data."""
    from evaluation.roar import scores as roar_scores

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
            print(f"  {s['mode']:9s} {s['measure']:14s} {s['score']:+.1%} [{s['low']:+.1%}, {s['high']:+.1%}] "
                  f"({s['seeds']} seeds) {s['verdict']}{leak}")
    welch = [w for w in data["accuracy"]["welch"] if w["n_a"] >= 2 and w["n_b"] >= 2]
    if welch:
        print("\nWelch t-test p-values (paper 000 Table 2d)")
        for w in welch:
            print(f"  {w['mode']:9s} {w['ratio']:g}%  {w['measure_a']} vs {w['measure_b']}: p = {w['p_value']:.4f}")
    if data["failed_cells"]:
        print(f"\n{len(data['failed_cells'])} cells failed (run the command again to retry them):")
        for key, error in list(data["failed_cells"].items())[:5]:
            print(f"  {key}: {error}")


def handle(args) -> int:
    from tqdm import tqdm

    from evaluation.runs import ray_executor
    from evaluation.roar.study import KIND, estimate, prepare_study
    from evaluation.runs.jobs import run_cells
    from evaluation.roar.study import roar_cell

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
        print(f"imported {run_id}")
        args.show = run_id
    if args.export:
        try:
            data = store.export_run(args.export)
        except KeyError as error:
            raise UserFacingError(str(error).strip("'\"")) from error
        text = json.dumps(data, indent=1, default=str)
        if args.output:
            Path(args.output).write_text(text)
            print(f"wrote {args.output}", file=sys.stderr)
        else:
            print(text)
        return 0
    if args.show:
        if store.get_run(args.show) is None:
            raise UserFacingError(f"No study '{args.show}' in {store.path}; see `cli.py roar --list`.")
        data = report(store, args.show)
        print_json(data) if args.json else print_report(data)
        return 0

    config = config_from_args(args)
    cost = estimate(config)
    counts = cost["retrains"]
    print(f"{counts['total']} retrains ({counts['formula']}); about {cost['total_seconds'] / 60:.0f} min on "
          f"{cost['device']} ({cost['seconds_per_retrain']:.0f} s per retrain, importance "
          f"{sum(cost['importance_seconds'].values()) / 60:.1f} min); variant: {config.variant.label()}", file=sys.stderr)
    if args.estimate:
        return 0
    store, run_id, cells = prepare_study(config, store)
    resources = {"num_cpus": args.ray_cpus, **({"num_gpus": args.ray_gpus} if args.ray_gpus else {})}
    bar = tqdm(total=len(cells), desc="ROAR cells", unit="retrain", file=sys.stderr)

    def progress(done: int, total: int, left: float | None) -> None:
        bar.n = done
        bar.set_postfix_str("" if left is None else f"about {left / 60:.1f} min left")
        bar.refresh()

    try:
        summary = run_cells(store, run_id, cells, roar_cell, executor=args.executor, progress=progress,
                            ray_address=args.ray_address, ray_resources=resources)
    except KeyboardInterrupt:
        store.set_status(run_id, "cancelled")
        print(f"\nstopped; the finished cells are kept. Run the same command again to resume ({run_id}).",
              file=sys.stderr)
        return 130
    finally:
        bar.close()
        if args.executor == "ray":
            ray_executor.shutdown()
    data = report(store, run_id)
    print_json(data) if args.json else print_report(data)
    return 0 if not summary.errors else 1
