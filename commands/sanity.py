"""`cli.py sanity`: model-randomization sanity checks over a dataset (or one text), with bootstrap 95 % CIs.

    python cli.py sanity --model default --dataset sst2:dev --limit 100 --methods saliency,input_x_gradient
    python cli.py sanity --check head --seeds 0,1,2 --methods leave_one_out    # paper 000, Table A5
    python cli.py sanity --text "a charming film" --methods saliency --json    # one input, every stage
    python cli.py sanity ... --out sanity.csv                                   # the per-stage table (.json: all)
"""
from __future__ import annotations

import json
import sys

import numpy as np
from tqdm import tqdm

from evaluation import targets
from evaluation.sanity import one_input
from evaluation.sanity import dataset as sanity_dataset
from evaluation.seeds import parse_seeds
from explainers import REGISTRY, ParamError
from explainers.cache import DEFAULT_CACHE
from models import load_classifier, randomize

from commands.common import add_output_options, check_out, parse_method_specs, print_json, write_out


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("sanity", help="randomize the model layer by layer (or its head) and measure how "
                                                  "much each explanation changes")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--dataset", default="sst2:dev", help="dataset id, e.g. sst2:dev, snli:dev, file:/x.csv")
    parser.add_argument("--limit", type=int, default=100, help="number of examples (paper 003 used 50)")
    parser.add_argument("--text", default=None, help="check one input instead of a dataset")
    parser.add_argument("--pair", default=None, help="second segment for --text")
    parser.add_argument("--methods", default=None,
                        help="comma-separated method ids, 'method:preset' allowed (default: six cheap methods"
                             " and the random baseline where registered)")
    parser.add_argument("--check", choices=list(sanity_dataset.CHECKS), default="layers",
                        help="layers: paper 003 layer randomization; head: paper 000 head randomization")
    parser.add_argument("--mode", choices=list(randomize.MODES), default="cascading")
    parser.add_argument("--init", choices=list(randomize.INITS), default="model",
                        help="model: the model's own initialization; normal: N(0,1) for every parameter (paper 003)")
    parser.add_argument("--seed", type=int, default=0, help="randomization seed (layers)")
    parser.add_argument("--seeds", default="0,1,2", help="head seeds (paper 000 used three)")
    parser.add_argument("--target", type=targets.cli_choice, default=targets.PREDICTED,
                        metavar="{predicted,gold,CLASS}", help=f"{targets.HELP} (explained at every stage)")
    parser.add_argument("--measure", choices=list(one_input.SIMILARITY_MEASURES), default="spearman",
                        help="similarity that decides the pass/fail flag")
    parser.add_argument("--threshold", type=float, default=one_input.DEFAULT_THRESHOLD,
                        help="a method fails when the similarity after randomization is at least this")
    parser.add_argument("--executor", choices=["local", "ray"], default="local")
    add_output_options(parser, "the results", csv="the per-stage summary of a dataset; every stage and method "
                       "of one text", json="the full report")
    parser.set_defaults(handler=handle)


def _methods(value: str | None) -> list[str]:
    return one_input.default_methods(REGISTRY) if value is None else parse_method_specs(value)


def _seeds(value: str) -> list[int]:
    return parse_seeds(value, name="--seeds")


def handle(args) -> int:
    out = check_out(args.out)
    methods = _methods(args.methods)
    if args.limit is not None and args.limit < 1:
        raise ParamError("--limit must be at least 1.")
    if args.text is not None:
        return _one_text(args, methods, out)
    bar = tqdm(total=None, desc="sanity", unit="example", file=sys.stderr, disable=None)

    def progress(done, total, eta):
        bar.total = total
        bar.n = done
        bar.refresh()

    store, summary = sanity_dataset.run_sanity_study(args.model, args.dataset, methods, limit=args.limit, check=args.check,
                                            mode=args.mode, init=args.init, seed=args.seed,
                                            seeds=_seeds(args.seeds), target=args.target, executor=args.executor,
                                            progress=progress)
    bar.close()
    run = store.get_run(summary.run_id)
    table = sanity_dataset.summarize(sanity_dataset.results_frame(store, summary.run_id))
    names = sanity_dataset.stage_names_for(run)
    accuracy = sanity_dataset.accuracy_by_stage(table, names)
    flags = {}
    if args.check == "layers":
        band, methods_only = sanity_dataset.chance_band(sanity_dataset.curves(table, names,
                                                                              sanity_dataset.MEASURES[args.measure]))
        flags = one_input.verdicts(methods_only.rename(columns={"mean": args.measure}), args.mode, args.measure,
                                   args.threshold, None if band is None else band["high"])
    report = {"run": run, "status": summary.status, "errors": summary.errors, "stages": names,
              "summary": json.loads(table.to_json(orient="records")),
              "accuracy": json.loads(accuracy.to_json(orient="records")),
              "majority_class_accuracy": sanity_dataset.chance_level(store, summary.run_id), "flags": flags}
    if out:
        write_out(out, report, table)
    if args.json:
        print_json(report)
        return 0
    print(f"{run['title']} · run {summary.run_id} · {summary.status} ({summary.done}/{summary.total})")
    if summary.errors:
        print(f"{len(summary.errors)} examples failed, e.g. {next(iter(summary.errors.values()))}")
    _print_tables(table, names, methods, args)
    if not accuracy.empty:
        print("\naccuracy of the randomized model per stage (majority class: "
              f"{report['majority_class_accuracy']:.1%}):")
        for row in accuracy.itertuples():
            print(f"  {row.stage:12s} {row.mean:6.1%} [{row.low:.1%}, {row.high:.1%}]")
    for method, verdict in flags.items():
        print(f"{'FAILS' if verdict['status'] == 'fails' else verdict['status']:7s} {method}: {verdict['reason']}")
    return 0


def _print_tables(table, names, methods, args) -> None:
    metrics = ["sanity_sign_change", "sanity_mean_abs_change"] if args.check == "head" else \
        [sanity_dataset.MEASURES[args.measure]]
    for metric in metrics:
        part = table[table["metric"] == metric]
        print(f"\n{one_input.METRICS[metric].label} (mean [95 % bootstrap CI]) per stage:")
        print("  " + f"{'stage':12s}" + "".join(f"{m[:26]:>28s}" for m in methods + [one_input.CHANCE]))
        for stage in names:
            cells = []
            for method in methods + [one_input.CHANCE]:
                row = part[(part["method"] == method) & ((part["stage"] == stage) | (method == one_input.CHANCE))]
                if row.empty or not np.isfinite(row.iloc[0]["mean"]):
                    cells.append(f"{'n/a':>28s}")
                else:
                    r = row.iloc[0]
                    cells.append(f"{r['mean']:+.2f} [{r['low']:+.2f},{r['high']:+.2f}]".rjust(28))
            print("  " + f"{stage:12s}" + "".join(cells))


def _one_text(args, methods: list[str], out) -> int:
    classifier = load_classifier(args.model)
    encoding = classifier.encode(args.text, args.pair)
    target = targets.explain_target(args.target, None)  # typed text has no gold label: "gold" explains the prediction
    bar = tqdm(total=None, desc="sanity", unit="explanation", file=sys.stderr, disable=None)

    def progress(done, total, label):
        bar.total = total
        bar.n = done
        bar.set_postfix_str(label[:40])
        bar.refresh()

    if args.check == "head":
        result = one_input.run_head_check(classifier, encoding, methods, seeds=_seeds(args.seeds), target=target,
                                          cache=DEFAULT_CACHE, progress=progress)
        bar.close()
        frame = result.frame()
        report = {"provenance": result.provenance(), "rows": json.loads(frame.to_json(orient="records")),
                  "summary": json.loads(result.summary().to_json(orient="records")), "errors": result.errors}
    else:
        result = one_input.run_sanity(classifier, encoding, methods, mode=args.mode, init=args.init, seed=args.seed,
                                      target=target, cache=DEFAULT_CACHE, progress=progress)
        bar.close()
        frame = result.frame()
        report = {"provenance": result.provenance(), "rows": json.loads(frame.to_json(orient="records")),
                  "chance": result.chance, "flags": result.verdicts(args.measure, args.threshold),
                  "errors": {f"{s.name} / {k}": v for s in result.stages for k, v in s.errors.items()}}
    if out:
        write_out(out, report, frame)
    if args.json:
        print_json(report)
        return 0
    print(f"model {classifier.name} ({classifier.fingerprint}); explaining "
          f"'{result.target_label}' at every stage")
    columns = ["seed" if args.check == "head" else "stage", "method", "spearman", "spearman_abs", "top_k",
               "sign_change", "mean_abs_change", "predicted"]
    print(frame[columns].to_string(index=False, float_format=lambda v: f"{v:+.3f}"))
    for method, verdict in report.get("flags", {}).items():
        print(f"{'FAILS' if verdict['status'] == 'fails' else verdict['status']:7s} {method}: {verdict['reason']}")
    for where, error in report["errors"].items():
        print(f"error {where}: {error}")
    return 0

