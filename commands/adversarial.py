"""`cli.py adversarial`: attack explanations in word-embedding space (paper 003, sections 2.3 and 3.5).

    python cli.py adversarial --model default --dataset sst2:dev --limit 16 \
        --methods saliency,input_x_gradient,integrated_gradients
    python cli.py adversarial --text "a charming, funny and moving film" --methods input_x_gradient --json
    python cli.py adversarial ... --preset paper-003-code    # the thesis code: detached explanation gradients
    python cli.py adversarial --dataset eraser-movies-docs:test --limit 3 --methods saliency  # documents, windows

A text longer than the model's window is read whole in overlapping windows and attacked over them (the
--window-* flags); --allow-long also lifts the attack's limit on documents of many windows (a cost estimate first).
"""
from __future__ import annotations

import json
import sys

import pandas as pd
from tqdm import tqdm

from commands.common import (
    add_executor_flag,
    add_input_options,
    add_output_options,
    add_schema_flags,
    check_out,
    emit,
    print_json,
    print_run_status,
    schema_values,
    stored_run,
    write_out,
)
from commands.documents import add_document_options, document_options_of
from evaluation.adversarial import dataset as adversarial_dataset
from evaluation.adversarial.attack import attack
from evaluation.adversarial.config import ATTACKED_METHODS, PRESETS, AttackConfig, config_for
from explainers import ParamError
from models import InputError, load_classifier
from models.documents import read_input

MEASURE_LABELS = {"rank_change": "Rank Change", "top_k_sum_change": "Top-k Sum Change",
                  "probability_change": "Probability Change", "class_kept": "class kept",
                  "steps_taken": "steps taken"}


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("adversarial", help="perturb word embeddings to move an explanation while the "
                                                       "prediction stays (paper 003)")
    add_input_options(parser, 16, "number of examples (paper 003 attacked 16)", "attack")
    parser.add_argument("--methods", default=",".join(ATTACKED_METHODS),
                        help=f"comma-separated, from: {', '.join(ATTACKED_METHODS)}")
    parser.add_argument("--preset", choices=list(PRESETS), default="paper-003",
                        help="paper-003: the thesis's definition with real double back-propagation; paper-003-code: "
                             "the thesis code (detached explanation gradients, U[0,1) start, logit matching)")
    add_schema_flags(parser, AttackConfig)
    add_document_options(parser, granularities=("word",))  # the attack's features are the tokens
    add_executor_flag(parser)
    add_output_options(parser, "the results", csv="the per-method summary (one input: its measures)",
                       json="the full report")
    parser.set_defaults(handler=handle)


def _methods(value: str) -> list[str]:
    methods = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in methods if m not in ATTACKED_METHODS]
    if not methods or unknown:
        raise ParamError(f"--methods: the attack needs differentiable methods; choose from "
                         f"{', '.join(ATTACKED_METHODS)}" + (f" (not {', '.join(unknown)})." if unknown else "."))
    return methods


def handle(args) -> int:
    out = check_out(args.out)
    methods = _methods(args.methods)
    config = config_for(args.preset, **schema_values(args, AttackConfig))
    if args.limit is not None and args.limit < 1:
        raise ParamError("--limit must be at least 1.")
    if args.spans:
        raise InputError("--spans: the attack perturbs every word token; spans are not its players. Leave it out.")
    documents = {key: value for key, value in document_options_of(args).items()
                 if key in adversarial_dataset.READING_OPTIONS}
    if args.text is not None:
        return _one_text(args, methods, config, out, documents)
    bar = tqdm(total=None, desc="adversarial", unit="example", file=sys.stderr, disable=None)

    def progress(done, total, eta):
        bar.total = total
        bar.n = done
        bar.refresh()

    store, summary = adversarial_dataset.run_attacks(args.model, args.dataset, methods, limit=args.limit,
                                                     config=config, executor=args.executor, progress=progress,
                                                     documents=documents)
    bar.close()
    run = stored_run(store, summary.run_id)
    table = adversarial_dataset.summarize(adversarial_dataset.results_frame(store, summary.run_id))
    skipped = adversarial_dataset.skipped_inputs(store, summary.run_id)
    report = {"run": run, "status": summary.status, "errors": summary.errors, "skipped_inputs": skipped,
              "summary": json.loads(table.to_json(orient="records"))}
    if emit(report, table, args, out):
        return 0
    print_run_status(run, summary)
    print("mean [95 % bootstrap CI] per method:")
    for method in methods:
        part = table[table["method"] == method]
        cells = [f"{MEASURE_LABELS[r.metric]} {r.mean:+.3f} [{r.low:+.3f}, {r.high:+.3f}]"
                 for r in part.itertuples()]
        note = f" ({skipped[method]} inputs too short, skipped)" if skipped.get(method) else ""
        print(f"  {method}{note}: " + "; ".join(cells))
    return 0


def _one_text(args, methods: list[str], config: AttackConfig, out, documents: dict) -> int:
    classifier = load_classifier(args.model)
    encoding = read_input(classifier, args.text, args.pair, documents)  # a long text: read whole, in windows
    results = {}
    for method in methods:
        bar = tqdm(total=config.steps, desc=method, unit="step", file=sys.stderr, disable=None)
        results[method] = attack(classifier, encoding, method, config,
                                 progress=lambda step, total, objective: bar.update(step - bar.n),  # noqa: B023 (called during this attack)
                                 allow_long=bool(documents.get("allow_long")))
        bar.close()
    report = {"model": classifier.name, "model_fingerprint": classifier.fingerprint, "text": args.text,
              "pair": args.pair, "results": {m: r.to_dict() for m, r in results.items()}}
    if out:
        write_out(out, report, _measures_table(results))
    if args.json:
        print_json(report)
        return 0
    for method, result in results.items():
        measures = ", ".join(f"{MEASURE_LABELS[k]} {v:+.3f}" for k, v in result.measures().items())
        print(f"{method}: {measures}; {result.steps_taken} steps ({result.stop_reason}), "
              f"||delta||_inf {result.delta_linf:.3g}")
        if result.replaced_words:
            print("  nearest words now: " + ", ".join(f"{r['token']}->{r['nearest']}" for r in result.replaced_words))
    return 0


def _measures_table(results) -> pd.DataFrame:
    return pd.DataFrame([{"method": m, **r.measures(), "steps_taken": r.steps_taken, "stop_reason": r.stop_reason}
                         for m, r in results.items()])
