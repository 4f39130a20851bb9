"""`cli.py deletion-grid`: paper 000's single-word deletion grid (Figs. A17/A18): every word removed in turn, the
predicted label and its confidence (``--width`` removes phrases of several words, paper 000 s. 7).

    python cli.py deletion-grid --model default --text "Enormously entertaining for moviegoers of any age ."
"""
from __future__ import annotations

from commands.common import add_output_options, check_out, print_json, write_out
from evaluation.faithfulness.deletion_grid import SOURCE, deletion_grid
from models import Operator, UserFacingError, cached_classifier


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("deletion-grid", help="paper 000's grid: each word deleted, the predicted label "
                                                         "and confidence")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--text", default=None, help="the input (required)")
    parser.add_argument("--pair", default=None, help="its second segment (NLI)")
    parser.add_argument("--operator", default="delete", choices=[o.value for o in Operator if o != Operator.MLM],
                        help="how a word is removed (delete: the paper's grid)")
    parser.add_argument("--width", type=int, default=1, help="words removed together (1: single words)")
    add_output_options(parser, "the grid", csv="one row per removal (the original first)", json="the same rows")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    out = check_out(args.out)
    if not args.text:
        raise UserFacingError("Give the input with --text \"...\" (and --pair for a sentence pair).")
    classifier = cached_classifier(args.model)
    grid, note = deletion_grid(classifier, classifier.encode(args.text, args.pair), args.operator, args.width)
    rows = grid.astype(object).where(grid.notna(), None).to_dict(orient="records")
    if out:
        write_out(out, {"source": SOURCE, "note": note, "rows": rows}, grid)
    if args.json:
        print_json({"source": SOURCE, "note": note, "rows": rows})
    elif not out:
        if note:
            print(f"note: {note}")
        for row in grid.itertuples():
            print(f"{'FLIP ' if row.flipped else '     '}{row.prediction} {row.confidence:.4f}  -{row.removed}  "
                  f"| {row.text}")
    return 0
