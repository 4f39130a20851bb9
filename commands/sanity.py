"""`cli.py sanity`: model-randomization sanity checks over a dataset (or one text), with bootstrap 95 % CIs.

    python cli.py sanity --model default --dataset sst2:dev --limit 100 --methods saliency,input_x_gradient
    python cli.py sanity --check head --seeds 3 --methods leave_one_out        # paper 000, Table A5 (seeds 0, 1, 2)
    python cli.py sanity --text "a charming film" --methods saliency --json    # one input, every stage
    python cli.py sanity ... --out sanity.csv                                   # the per-stage table (.json: all)
    python cli.py sanity --measures emprt,smprt,repeatability --methods saliency,lime   # the newer sanity measures
    python cli.py sanity --data-randomization --steps 200 --train-data sst2:train        # Adebayo et al. sec. 4
"""
from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
from tqdm import tqdm

from commands.common import (
    add_executor_flag,
    add_input_options,
    add_output_options,
    check_out,
    emit,
    parse_method_specs,
    print_json,
    print_run_status,
    stored_run,
    write_out,
)
from evaluation import targets
from evaluation.metric import METRICS
from evaluation.sanity import data_randomization, emprt, head_check, one_input, repeatability, smprt
from evaluation.sanity import dataset as sanity_dataset
from evaluation.seeds import parse_seeds
from explainers import REGISTRY, ParamError
from explainers.cache import DEFAULT_CACHE
from models import load_classifier, randomize


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("sanity", help="randomize the model layer by layer (or its head) and measure how "
                                                  "much each explanation changes")
    add_input_options(parser, 100, "number of examples (paper 003 used 50)", "check")
    parser.add_argument("--methods", default=None,
                        help="comma-separated method ids, 'method:preset' allowed (default: six cheap methods"
                             " and the random baseline where registered)")
    parser.add_argument("--check", choices=list(sanity_dataset.CHECKS), default="layers",
                        help="layers: paper 003 layer randomization; head: paper 000 head randomization")
    parser.add_argument("--mode", choices=list(randomize.MODES), default="cascading")
    parser.add_argument("--init", choices=list(randomize.INITS), default="model",
                        help="model: the model's own initialization; normal: N(0,1) for every parameter (paper 003)")
    parser.add_argument("--seed", type=int, default=None,
                        help="one seed: the layer randomization's (default 0), or the head check's single seed")
    parser.add_argument("--seeds", default=None,
                        help="head seeds: a count (3 = seeds 0, 1, 2, as everywhere) or a list '0,4,7' "
                             "(default 3; paper 000 used three); one seed is --seed N")
    parser.add_argument("--target", type=targets.cli_choice, default=targets.PREDICTED,
                        metavar="{predicted,gold,CLASS}", help=f"{targets.HELP} (explained at every stage)")
    parser.add_argument("--measure", choices=list(one_input.SIMILARITY_MEASURES), default="spearman",
                        help="similarity that decides the pass/fail flag")
    parser.add_argument("--threshold", type=float, default=one_input.DEFAULT_THRESHOLD,
                        help="a method fails when the similarity after randomization is at least this")
    parser.add_argument("--measures", default="",
                        help="extra measures, comma-separated: " + "; ".join(
                            f"{k}: {v}" for k, v in sanity_dataset.EXTRA_MEASURES.items()))
    parser.add_argument("--smprt-preset", choices=list(smprt.PRESETS), default="quantus-2023",
                        help="sMPRT's noisy samples and noise magnitude from a source (quantus-2023: N = 50, 0.1)")
    parser.add_argument("--smprt-samples", type=int, default=None, help="sMPRT: noisy samples per stage (N)")
    parser.add_argument("--smprt-noise", type=float, default=None,
                        help="sMPRT: noise std as a share of the input embeddings' range")
    parser.add_argument("--repeat-seeds", default="5",
                        help="repeatability: the seeds each method runs with, a count (5 = seeds 0..4) or a list")
    parser.add_argument("--data-randomization", action="store_true",
                        help="instead of randomizing weights: fine-tune a copy on permuted labels (built once, "
                             "cached) and compare each method's maps on the two models (Adebayo et al. 2018 sec. 4)")
    parser.add_argument("--steps", type=int, default=data_randomization.DEFAULT_STEPS,
                        help=f"data randomization: optimizer steps of {data_randomization.DEFAULT_BATCH} examples "
                             f"(default {data_randomization.DEFAULT_STEPS}; the paper trained to convergence)")
    parser.add_argument("--train-data", default=None,
                        help="data randomization: the training data (default: the one in the model's manifest)")
    add_executor_flag(parser)
    add_output_options(parser, "the results", csv="the per-stage summary of a dataset; every stage and method "
                       "of one text", json="the full report")
    parser.set_defaults(handler=handle)


def _methods(value: str | None) -> list[str]:
    return one_input.default_methods(REGISTRY) if value is None else parse_method_specs(value)


def _seeds(args) -> list[int]:
    """The head check's seeds: --seeds is a count or a list, as in every command; --seed N alone is one seed."""
    if args.seeds is not None and args.seed is not None:
        raise ParamError("Give either --seeds (a count or a list) or --seed (one seed), not both.")
    if args.seeds is None:
        return [args.seed] if args.seed is not None else [0, 1, 2]
    return parse_seeds(args.seeds, name="--seeds", count=True)


def _layer_seed(args) -> int:
    if args.seeds is not None and args.check == "layers":
        raise ParamError("--seeds are the head check's seeds: the layer check takes one seed, --seed N.")
    return 0 if args.seed is None else args.seed


def _measures(value: str) -> list[str]:
    chosen = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in chosen if m not in sanity_dataset.EXTRA_MEASURES]
    if unknown:
        raise ParamError(f"Unknown measure(s) {', '.join(unknown)} in --measures. Choose from: "
                         f"{', '.join(sanity_dataset.EXTRA_MEASURES)}.")
    return chosen


def _smoothing(args) -> smprt.SmoothingOptions:
    options = smprt.PRESETS[args.smprt_preset]
    if args.smprt_samples is not None:
        if args.smprt_samples < 1:
            raise ParamError("--smprt-samples must be at least 1.")
        options = smprt.SmoothingOptions(args.smprt_samples, options.noise, options.seed)
    if args.smprt_noise is not None:
        if args.smprt_noise < 0:
            raise ParamError("--smprt-noise must be 0 or more.")
        options = smprt.SmoothingOptions(options.samples, args.smprt_noise, options.seed)
    return options


def _repeat_seeds(value: str) -> list[int]:
    seeds = parse_seeds(value, name="--repeat-seeds", count=True)
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ParamError("--repeat-seeds needs at least two different seeds, e.g. 0,1,2,3,4.")
    return seeds


def measure_tables(table, names, measures: list[str]) -> dict:
    """The extra measures of a dataset run: {metric id: {"band": random band, "rows": per method (and stage)}}."""
    out = {}
    for measure in measures:
        if measure == "smprt":
            band, rows = sanity_dataset.chance_band(sanity_dataset.curves(table, names, smprt.METRIC.id))
            out[smprt.METRIC.id] = {"band": band, "rows": json.loads(rows.to_json(orient="records"))}
        else:
            for metric in ([emprt.METRIC.id] if measure == "emprt" else list(repeatability.MEASURES.values())):
                out[metric] = _single_stage(table, metric)
    return out


def _single_stage(table, metric: str) -> dict:
    band, rows = sanity_dataset.measure_table(table, metric)
    return {"band": band, "rows": json.loads(rows.to_json(orient="records"))}


def handle(args) -> int:
    out = check_out(args.out)
    methods = _methods(args.methods)
    measures = _measures(args.measures)
    smoothing = _smoothing(args)
    repeat_seeds = _repeat_seeds(args.repeat_seeds)
    if args.limit is not None and args.limit < 1:
        raise ParamError("--limit must be at least 1.")
    if args.data_randomization:
        return _data_randomization(args, methods, out)
    if args.text is not None:
        return _one_text(args, methods, out, measures, smoothing, repeat_seeds)
    bar = tqdm(total=None, desc="sanity", unit="example", file=sys.stderr, disable=None)

    def progress(done, total, eta):
        bar.total = total
        bar.n = done
        bar.refresh()

    store, summary = sanity_dataset.run_sanity_study(args.model, args.dataset, methods, limit=args.limit, check=args.check,
                                            mode=args.mode, init=args.init, seed=_layer_seed(args),
                                            seeds=_seeds(args), target=args.target, executor=args.executor,
                                            progress=progress, measures=measures, smoothing=smoothing,
                                            repeat_seeds=repeat_seeds)
    bar.close()
    run = stored_run(store, summary.run_id)
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
              "majority_class_accuracy": sanity_dataset.chance_level(store, summary.run_id), "flags": flags,
              "measures": measure_tables(table, names, measures)}
    if emit(report, table, args, out):
        return 0
    print_run_status(run, summary)
    _print_tables(table, names, methods, args)
    if not accuracy.empty:
        print("\naccuracy of the randomized model per stage (majority class: "
              f"{report['majority_class_accuracy']:.1%}):")
        for row in accuracy.itertuples():
            print(f"  {row.stage:12s} {row.mean:6.1%} [{row.low:.1%}, {row.high:.1%}]")
    for method, verdict in flags.items():
        print(f"{'FAILS' if verdict['status'] == 'fails' else verdict['status']:7s} {method}: {verdict['reason']}")
    _print_measures(report["measures"])
    return 0


def _data_randomization(args, methods: list[str], out) -> int:
    """Build (or find) the permuted-label model, then compare the maps on one text or over the dataset."""
    if args.steps < 1:
        raise ParamError("--steps must be at least 1.")
    options = data_randomization.BuildOptions(steps=args.steps, seed=_layer_seed(args))
    bar = tqdm(total=None, desc="permuted-label model", unit="build", file=sys.stderr, disable=None)
    folder = data_randomization.build(args.model, args.train_data, options)
    bar.close()
    manifest = json.loads((folder / "manifest.json").read_text())
    if args.text is not None:
        classifier = load_classifier(args.model)
        frame, band, errors = data_randomization.compare_maps(
            classifier, load_classifier(str(folder)), classifier.encode(args.text, args.pair), methods,
            targets.explain_target(args.target, None), cache=DEFAULT_CACHE)
        report = {"permuted_model": manifest, "rows": json.loads(frame.to_json(orient="records")), "band": band,
                  "errors": errors}
        table = frame
    else:
        store, summary = data_randomization.run_study(args.model, str(folder), args.dataset, methods, args.limit,
                                                      args.target, executor=args.executor)
        table = sanity_dataset.summarize(data_randomization.results_frame(store, summary.run_id))
        report = {"permuted_model": manifest, "run": store.get_run(summary.run_id), "status": summary.status,
                  "errors": summary.errors, "summary": json.loads(table.to_json(orient="records")),
                  "measures": {metric: _single_stage(table, metric) for metric in data_randomization.METRICS}}
    if out:
        write_out(out, report, table)
    if args.json:
        print_json(report)
        return 0
    training = manifest["training"]
    print(f"permuted-label model {folder} ({training['steps']} steps on {manifest['train_data']}): agrees with the "
          f"true labels on {training['agreement_true']:.1%} of its training inputs (mean probability of the true "
          f"class {training.get('probability_true', float('nan')):.2f}), with the permuted labels on "
          f"{training['agreement_permuted']:.1%}")
    if args.text is not None:
        print(frame.to_string(index=False, float_format=lambda v: f"{v:+.3f}"))
        print(f"{one_input.CHANCE}: spearman {_interval(**band['spearman'])}, top_k {_interval(**band['top_k'])}")
        return 0
    _print_measures(report["measures"])
    return 0


def _print_measures(measures: dict) -> None:
    """Per metric: each method's mean [95 % CI] (sMPRT at its last stage) and the random band."""
    for metric_id, part in measures.items():
        metric = METRICS[metric_id]
        print(f"\n{metric.label} {metric.arrow} (mean [95 % bootstrap CI]):")
        rows = part["rows"]
        if metric_id == smprt.METRIC.id and rows:
            last = max(r["stage_index"] for r in rows)
            rows = [r for r in rows if r["stage_index"] == last]
        for row in rows:
            print(f"  {row['method'][:40]:40s} {_interval(row['mean'], row['low'], row['high'])}")
        band = part["band"]
        if band is not None:
            print(f"  {one_input.CHANCE[:40]:40s} {_interval(band['mean'], band['low'], band['high'])}")


def _interval(mean, low, high) -> str:
    if mean is None or not np.isfinite(mean):
        return "n/a"
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


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


def _one_text_measures(classifier, encoding, methods, result, target, measures, smoothing, repeat_seeds,
                       progress) -> dict:
    """eMPRT, sMPRT and repeatability of one input (each with its random band), as chosen in ``measures``."""
    out: dict[str, dict] = {}
    if any(m in sanity_dataset.NEEDS_CASCADING for m in measures) and (result.mode != "cascading"
                                                                         or not result.complete):
        raise ParamError("eMPRT and sMPRT compare with the fully randomized model: use --mode cascading.")
    if "emprt" in measures:
        out[emprt.METRIC.id] = {"values": emprt.emprt(result), "band": emprt.emprt_chance(result)}
    if "smprt" in measures:
        smooth = smprt.run_smprt(classifier, encoding, methods, smoothing, mode=result.mode, init=result.init,
                                 seed=result.seed, target=result.target, cache=DEFAULT_CACHE, progress=progress)
        out[smprt.METRIC.id] = {"values": smprt.smprt(smooth), "band": smooth.chance[smprt.MEASURE],
                                "smoothing": dataclasses.asdict(smoothing),
                                "rows": json.loads(smooth.frame().to_json(orient="records"))}
    if "repeatability" in measures:
        repeated = repeatability.run_repeatability(classifier, encoding, methods, seeds=repeat_seeds,
                                                   target=target if target is not None else result.target,
                                                   cache=DEFAULT_CACHE, progress=progress)
        frame = repeated.frame().set_index("method")
        for measure, metric in repeatability.MEASURES.items():
            out[metric] = {"values": frame[measure].to_dict(), "band": repeated.chance[measure],
                           "seeds": repeated.seeds}
    return out


def _one_text(args, methods: list[str], out, measures=(), smoothing=None, repeat_seeds=()) -> int:
    if args.check == "head" and measures:  # the flags checked before a model is loaded or built
        raise ParamError("--measures run with the layer check: use --check layers.")
    seeds, layer_seed = (_seeds(args), 0) if args.check == "head" else ([], _layer_seed(args))
    classifier = load_classifier(args.model)
    encoding = classifier.encode(args.text, args.pair)
    target = targets.explain_target(args.target, None)  # typed text has no gold label: "gold" explains the prediction
    bar = tqdm(total=None, desc="sanity", unit="explanation", file=sys.stderr, disable=None)

    def progress(done, total, label):
        bar.total = total
        bar.n = done
        bar.set_postfix_str(label[:40])
        bar.refresh()

    result: head_check.HeadCheckResult | one_input.SanityResult
    if args.check == "head":
        result = head_check.run_head_check(classifier, encoding, methods, seeds=seeds, target=target,
                                          cache=DEFAULT_CACHE, progress=progress)
        bar.close()
        frame = result.frame()
        report = {"provenance": result.provenance(), "rows": json.loads(frame.to_json(orient="records")),
                  "summary": json.loads(result.summary().to_json(orient="records")), "errors": result.errors}
    else:
        result = one_input.run_sanity(classifier, encoding, methods, mode=args.mode, init=args.init,
                                      seed=layer_seed,
                                      target=target, cache=DEFAULT_CACHE, progress=progress)
        extra = _one_text_measures(classifier, encoding, methods, result, target, measures, smoothing,
                                   repeat_seeds, progress)
        bar.close()
        frame = result.frame()
        report = {"provenance": result.provenance(), "rows": json.loads(frame.to_json(orient="records")),
                  "chance": result.chance, "flags": result.verdicts(args.measure, args.threshold),
                  "errors": {f"{s.name} / {k}": v for s in result.stages for k, v in s.errors.items()},
                  "measures": extra}
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
    for metric_id, part in report.get("measures", {}).items():
        metric = METRICS[metric_id]
        print(f"\n{metric.label} {metric.arrow}:")
        for method, value in part["values"].items():
            print(f"  {method[:40]:40s} {value:+.3f}" if value is not None and np.isfinite(value)
                  else f"  {method[:40]:40s} n/a")
        band = part["band"]
        print(f"  {one_input.CHANCE[:40]:40s} {_interval(band['mean'], band['low'], band['high'])}")
    for where, error in report["errors"].items():
        print(f"error {where}: {error}")
    return 0

