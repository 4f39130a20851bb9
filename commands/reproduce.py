"""`cli.py reproduce`: one paper's headline findings as a stored, resumable run, with the paper's numbers, ours over
training seeds (95 % intervals) and verdicts; writes docs/reproductions/paper-XXX.md from the stored results.

    python cli.py reproduce --paper 000 --budget quick          # prints the estimate, then runs (resumes) it
    python cli.py reproduce --paper 001 --budget tiny --json     # the machinery on one-block models, in minutes
    python cli.py reproduce --paper 003 --budget full --estimate-only   # the papers' sizes: for a GPU or Ray
    python cli.py reproduce --paper 002 --budget quick --executor processes --docs /tmp/pages

Interrupted (Ctrl-C, a crash), it resumes with the cells it has: no finished cell is recomputed.
"""
from __future__ import annotations

import sys
from pathlib import Path

from commands.common import add_executor_flag, add_output_options, check_out, job_progress, print_json, write_out
from evaluation.reproduce import BUDGETS, PAPERS, estimate, results, run_reproduce, table, write_page
from evaluation.runs.store import ResultStore
from models.machine import describe

DOCS = Path(__file__).resolve().parent.parent / "docs" / "reproductions"


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("reproduce", help="run a paper's headline experiments over training seeds and "
                                                     "write its reproduction page (resumable)")
    parser.add_argument("--paper", default="000", choices=list(PAPERS), help="which paper (shared/seeds/; default 000)")
    parser.add_argument("--budget", default="quick", choices=list(BUDGETS),
                        help="tiny: one-block models trained in seconds (tests, a first look); quick: all five papers "
                             "within 3 hours on a 2-core CPU; full: the papers' sizes (a GPU or a Ray cluster)")
    add_executor_flag(parser)
    parser.add_argument("--docs", default=str(DOCS), help="folder of the generated page (default docs/reproductions)")
    parser.add_argument("--estimate-only", action="store_true", help="print the estimate and stop")
    parser.add_argument("--note", default="", help="a line added at the end of the page (e.g. that the machine was "
                                                   "shared with other work while it ran)")
    add_output_options(parser, "the findings", csv="one row per finding, as the page's table",
                       json="the findings with every seed's value and details")
    parser.set_defaults(handler=handle)


def command_line(args) -> str:
    return f"python cli.py reproduce --paper {args.paper} --budget {args.budget} --executor {args.executor}"


def duration(seconds: float) -> str:
    return f"{seconds / 3600:.1f} CPU-hours" if seconds >= 7200 else f"{seconds / 60:.1f} min"


def handle(args) -> int:
    out = check_out(args.out)
    cost = estimate(args.paper, args.budget)
    print(f"estimate for paper {args.paper}, budget {args.budget} (models/metering.py's cold CPU rate; a shared "
          f"machine is slower): {duration(cost['total'])}", file=sys.stderr)
    for name, seconds in cost["per_finding"].items():
        print(f"  {name}: {duration(seconds)}", file=sys.stderr)
    if args.estimate_only:
        return 0
    bar, progress = job_progress(f"reproducing paper {args.paper}", "cell")
    try:
        store, summary = run_reproduce(args.paper, args.budget, args.executor, ResultStore(), progress=progress,
                                       machine=describe())
    finally:
        bar.close()
    path = write_page(store, summary.run_id, Path(args.docs), command_line(args), note=args.note)
    report = results(store, summary.run_id)
    if out:
        write_out(out, {**report, "page": str(path)}, table(report))
    if args.json:
        print_json({**report, "page": str(path)})
        return 0
    print(f"run {summary.run_id}: {summary.done}/{summary.total} cells ({summary.status}); page {path}")
    print(table(report).to_string(index=False, max_colwidth=60))
    return 0
