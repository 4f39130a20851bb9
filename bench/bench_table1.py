"""Paper 002's Table 1 on whole ERASER movie reviews (``eraser-movies-docs:test``) for any number of documents: MaRC,
Occlusion, Saliency_n, Int. Grads_n, LIME, Shapley sampling and leave-one-out, each scored by comprehensiveness /
sufficiency (19 points, [PAD], gold class) and token F1 (top-p) / mAP / IoU F1 against the human rationales, beside
the paper's numbers (``evaluation/reproduce/table1_002.py``). One seeded model of a reproduce budget (trained first
when missing: seconds on a GPU for ``quick``).

A stored, resumable run (one cell per document, in the result store): a stopped run resumes with the documents it
has, and ``--report-only`` writes the table from what is stored, so a time-limited GPU session records what
finished (bench/gpu_check.sh step 4).

    python bench/bench_table1.py --budget quick --documents 20           # 20 reviews, the paper's settings
    python bench/bench_table1.py --budget full --documents 200           # the paper's size and model (6 blocks)
    python bench/bench_table1.py --budget tiny --documents 2             # cheap settings: the machinery (CPU, minutes)
    python bench/bench_table1.py --budget quick --documents 20 --report-only --out docs/benchmarks.md
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.machine import describe  # noqa: E402
from evaluation.reproduce import table1_002 as table1  # noqa: E402
from evaluation.reproduce.findings import BUDGETS  # noqa: E402
from evaluation.reproduce.seed_models import sst_model  # noqa: E402
from evaluation.runs.store import ResultStore  # noqa: E402
from models import UserFacingError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", choices=list(table1.SETTINGS), default="quick",
                        help="the seeded model's size and the methods' settings (tiny: cheap settings)")
    parser.add_argument("--documents", type=int, default=20, help="the first N test documents (at least 2)")
    parser.add_argument("--seed", type=int, default=0, help="the training seed of the model")
    parser.add_argument("--store", type=Path, default=None, help="result store (default: the cache's)")
    parser.add_argument("--report-only", action="store_true", help="compute nothing: the table of what is stored")
    parser.add_argument("--out", type=Path, default=None, help="append the markdown table to this file")
    args = parser.parse_args(argv)
    if args.documents < 2:
        parser.error("--documents must be at least 2 (the top-p token F1 is fitted leave-one-out over documents)")
    store = ResultStore(args.store) if args.store else ResultStore()
    started = time.time()
    model = sst_model(BUDGETS[args.budget], args.seed, log=lambda m: print(m, file=sys.stderr, flush=True))
    try:
        if args.report_only:
            found = table1.stored(store, model, args.budget, args.seed, args.documents)
        else:
            found = table1.compute(store, model, args.budget, args.seed, args.documents)
    except UserFacingError as error:  # a report before any document finished
        print(f"bench_table1: {error}", file=sys.stderr)
        return 1
    setting = table1.SETTINGS[args.budget]
    lines = ["", f"### Paper 002 Table 1 on whole documents: {len(found['documents'])} of {args.documents} "
             f"`{table1.DATASET}` reviews, budget `{args.budget}` (seed {args.seed}), {time.strftime('%Y-%m-%d')}", "",
             f"bench/bench_table1.py --budget {args.budget} --documents {args.documents} --seed {args.seed}; model "
             f"`{Path(model).name}`; run `{found['run']}`; {setting.note}; run options "
             f"{found['options'] or 'the defaults'}; {describe()}. Ours (mean over the documents) / the paper's "
             "(BERT-base, 199 reviews). Seconds per document: each explanation's own time.", ""]
    lines += table1.markdown_rows(found)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with args.out.open("a") as handle:
            handle.write(text)
    print(f"({time.time() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
