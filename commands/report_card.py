"""`cli.py report-card`: "which method should I trust for this model?": every method on every check (known feature,
faithfulness vs random, sanity randomization, adversarial robustness, plausibility, agreement) with its 95 % CI and a
pass / fail / inconclusive verdict by a written rule, then the ordering of the methods with its reasoning.

    python cli.py report-card --model default --limit 100
    python cli.py report-card --model default --methods saliency,integrated_gradients --out card.html
    python cli.py report-card --model default --quick --json          # tiny sizes, to try it in a minute
    python cli.py report-card --model default --protocol paper-003     # paper 003's Def. 2.1/2.2 and N(0, 1)
    python cli.py report-card --model bert-base-uncased --executor ray --ray-gpus 1   # each study's cells on GPUs

Every study is stored in the result store, so a rerun reopens the card without recomputing anything. The checks run
one after another; each check's study runs its examples on ``--executor`` (local: this process, on EXWB_DEVICE;
processes: one worker per core, or per GPU; ray: tasks asking for --ray-cpus / --ray-gpus each).
"""
from __future__ import annotations

import sys
from dataclasses import replace

from tqdm import tqdm

from commands.common import (
    add_column_options,
    add_executor_flag,
    check_out,
    help_text,
    parse_method_specs,
    print_json,
    write_out,
)
from corpora import check_dataset_id
from evaluation.suite.protocols import PROTOCOLS
from evaluation.suite.report_card import CardConfig, build_report_card, default_methods
from evaluation.suite.report_card_html import card_html, interval_text, reference_text
from evaluation.suite.report_card_rules import RULES
from explainers import ParamError

OUT_FORMATS = (".json", ".html")


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("report-card", help="which method to trust for a model: every check, verdicts "
                                                       "by written rules and an ordering with its reasoning")
    defaults = CardConfig()
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    add_column_options(parser)  # --text-column / --label-column / --pair-column of a file: dataset
    parser.add_argument("--dataset", default="sst2:dev", help="dataset id, e.g. sst2:dev, file:/x.csv")
    parser.add_argument("--limit", type=int, default=defaults.limit,
                        help="examples of the faithfulness and agreement checks")
    parser.add_argument("--methods", default=None,
                        help="comma-separated method[:preset] (default: paper 003's methods)")
    parser.add_argument("--checks", default=",".join(RULES), help=f"comma-separated, from: {', '.join(RULES)}")
    parser.add_argument("--protocol", default=defaults.protocol, choices=list(PROTOCOLS),
                        help="default: ERASER AOPC (words deleted) on --dataset and layer randomization with the "
                             "model's initializer; paper-003: paper 003's Def. 2.1/2.2 (5/10/20/50 %%, ceil, [MASK], "
                             "mean |delta p|) on the known-feature task and layer randomization from N(0, 1)")
    parser.add_argument("--sanity-limit", type=int, default=defaults.sanity_limit, help="examples of the sanity check")
    parser.add_argument("--attack-limit", type=int, default=defaults.attack_limit,
                        help="examples attacked (paper 003: 16; the default 8 keeps the card within 30 minutes on a "
                             "2-core CPU)")
    parser.add_argument("--attack-steps", type=int, default=defaults.attack_steps, help="optimization steps per attack")
    parser.add_argument("--known-feature-limit", type=int, default=defaults.known_feature_limit,
                        help="known-feature sentences")
    parser.add_argument("--known-feature-model", default=None,
                        help="model for the known-feature check (default: the project's known-feature model)")
    parser.add_argument("--known-feature-dataset", default=None,
                        help="dataset whose rationale marks the known feature (default: known-feature:dev:0)")
    parser.add_argument("--plausibility-dataset", default=None,
                        help="dataset with human rationales (default: --dataset when it has them)")
    parser.add_argument("--plausibility-limit", type=int, default=defaults.plausibility_limit,
                        help="examples of the plausibility check")
    parser.add_argument("--seed", type=int, default=defaults.seed, help="seed of the random baselines and attacks")
    add_executor_flag(parser)  # where each check's study runs its cells (--ray-gpus for GPU nodes)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a few examples, a few attack steps)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help=help_text("write the card to FILE, in the format of its extension (.json: the whole "
                                       "card; .html: a self-contained page)"))
    parser.add_argument("--json", action="store_true", help=help_text("print the card as JSON on stdout"))
    parser.set_defaults(handler=handle)


def config_from_args(args) -> CardConfig:
    checks = tuple(c.strip() for c in args.checks.split(",") if c.strip())
    unknown = [c for c in checks if c not in RULES]
    if not checks or unknown:
        raise ParamError(f"--checks: unknown {', '.join(unknown) or '(none given)'}; choose from {', '.join(RULES)}.")
    sizes = {"limit": args.limit, "sanity_limit": args.sanity_limit, "attack_limit": args.attack_limit,
             "attack_steps": args.attack_steps, "known_feature_limit": args.known_feature_limit,
             "plausibility_limit": args.plausibility_limit}
    bad = [name for name, value in sizes.items() if value < 1]
    if bad:
        raise ParamError(f"--{bad[0].replace('_', '-')} must be at least 1.")
    config = CardConfig(checks=checks, **sizes, seed=args.seed, known_feature_model=args.known_feature_model,
                        known_feature_dataset=args.known_feature_dataset,
                        plausibility_dataset=args.plausibility_dataset, protocol=args.protocol)
    if args.quick:  # the quick sizes, keeping every other choice
        quick = CardConfig.quick()
        config = replace(config, **{name: getattr(quick, name) for name in sizes})
    return config


def handle(args) -> int:
    out = check_out(args.out, OUT_FORMATS)
    methods = parse_method_specs(args.methods) if args.methods else default_methods()
    config = config_from_args(args)
    for data in (args.dataset, config.known_feature_dataset, config.plausibility_dataset):
        if data:  # an unreadable file, or one that is no dataset, stops here: one line, no progress bar
            check_dataset_id(data)
    bar = tqdm(total=len(config.checks), desc="report card", unit="check", file=sys.stderr)

    def progress(done: int, total: int, eta) -> None:
        bar.update(done - bar.n)

    try:
        card = build_report_card(args.model, args.dataset, methods, config=config, progress=progress,
                                 executor=args.executor)
    finally:
        bar.close()
    if out:
        if out.suffix.lower() == ".html":
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(card_html(card))
            print(f"wrote {out}", file=sys.stderr)
        else:
            write_out(out, card)
    if args.json:
        print_json(card)
        return 0
    print(f"Report card of {card['model']} on {card['dataset']}, {card['protocol_label']} (run {card['run_id']}):")
    for rule in card["rules"]:
        print(f"\n{rule['label']} [{rule['metric']}]: {rule['text']}")
        for row in (r for r in card["rows"] if r["check"] == rule["check"]):
            detail = row["not_applicable"] or f"{interval_text(row)} {reference_text(row)}".strip()
            print(f"  {row['method']}: {row['verdict']}  {detail}" + (f"  ({row['note']})" if row.get("note") else ""))
    print(f"\nOrdering. {card['ordering_rule']}")
    for entry in card["ordering"]:
        print(f"  {entry['rank']}. {entry['method']}: {entry['reasoning']}")
    for check, error in card["errors"].items():
        print(f"warning: the {check} check failed: {error}", file=sys.stderr)
    return 0
