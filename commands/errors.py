"""`cli.py errors`: a dataset's predictions, each error's top words under a method, the slice summary (the errors
against as many correctly classified examples) and the words that raise the error rate.

    python cli.py errors --model default --dataset sst2:dev --method lime --limit 200 --out errors.csv

Predictions are stored in the result store (keyed by the model's weights and the dataset's content), so a rerun
reopens them instantly; explanations go through the explanation cache.
"""
from __future__ import annotations

import sys
from pathlib import Path

from commands.common import add_column_options, add_output_options, check_out, job_progress, print_json, write_out
from corpora import load_dataset
from evaluation.errors import LABELS_NEEDED
from evaluation.errors.embedding_map import embed_dataset, project
from evaluation.errors.report import MAX_EXPLAINED, error_report
from evaluation.errors.slices import MIN_COUNT, TOP_K
from explainers import label_for, parse_spec
from models import cached_classifier

SHOWN = 10  # errors and words printed in the human-readable summary


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("errors", help="error analysis: predictions, the errors' top words, shortcut words")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    add_column_options(parser)  # --text-column / --label-column / --pair-column of a file: dataset
    parser.add_argument("--dataset", default="sst2:dev", help="name:split (sst2:dev, mr:all, ...) or file:PATH")
    parser.add_argument("--method", default="leave_one_out", help="method id or method:preset that explains the "
                                                                  "errors (see `cli.py methods`)")
    parser.add_argument("--limit", type=int, default=0, help="first N examples (0 = all)")
    parser.add_argument("--max-explained", type=int, default=MAX_EXPLAINED,
                        help="errors explained, the most confident first (and as many correct examples)")
    parser.add_argument("--top-k", type=int, default=TOP_K, help="top words kept per explained example")
    parser.add_argument("--min-count", type=int, default=MIN_COUNT,
                        help="shortcut words: test only words present in at least this many examples")
    parser.add_argument("--map", metavar="FILE.csv", default=None,
                        help="also write the embedding map: each example's PCA coordinates of the pooled "
                             "token's last hidden state, with gold, prediction, confidence")
    add_output_options(parser, "the report", csv="the table: one row per example, each explained error's top words",
                       json="the table, the slice summary, the shortcut words and the configuration")
    parser.set_defaults(handler=handle)



def handle(args) -> int:
    out = check_out(args.out)
    parse_spec(args.method)  # an unknown method fails before any work
    classifier = cached_classifier(args.model)
    examples = load_dataset(args.dataset, limit=args.limit or None, label_names=classifier.labels)
    predicting, on_predict = job_progress("predicting", "example")
    explaining, on_explain = job_progress(f"explaining with {args.method}", "example")
    report = error_report(classifier, examples, args.dataset, args.method, args.model,
                          max_explained=args.max_explained, k=args.top_k, min_count=args.min_count,
                          predicting=on_predict, explaining=on_explain)
    predicting.close()
    explaining.close()
    if args.map:
        write_map(classifier, examples, report.table.frame, args.map)
    if not report.table.has_labels:
        print(f"note: {LABELS_NEEDED}", file=sys.stderr)
    if out:
        write_out(out, report.to_dict(), report.rows)
    if args.json:
        print_json(report.to_dict())
        return 0
    if out:
        return 0
    print_summary(report)
    return 0


def write_map(classifier, examples, frame, path: str) -> None:
    """The embedding map as CSV: the vectors come from (or go to) the result store, like the app's map."""
    mapped = embed_dataset(classifier, examples)
    coords, info = project(mapped.vectors)
    table = frame[["index", "id", "text", "gold_label", "predicted_label", "confidence", "correct"]].assign(
        pc1=coords[:, 0], pc2=coords[:, 1])
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path, index=False)
    shares = ", ".join(f"{share:.1%}" for share in info["explained_variance_ratio"])
    print(f"embedding map: {path} (PCA; variance explained by the two axes: {shares})", file=sys.stderr)


def print_summary(report) -> None:
    table, rows = report.table, report.rows
    print(f"{report.config['model']} on {report.config['dataset']}: {len(rows)} examples"
          + (f", accuracy {table.accuracy:.1%}, {int(rows['correct'].eq(False).sum())} errors" if table.has_labels
             else " (no gold labels)"))
    if report.summary is None:
        return
    print(f"\nThe most confident errors, top words by {label_for(report.config['method'])}:")
    for row in rows[rows["correct"].eq(False)].head(SHOWN).itertuples():
        print(f"  #{row.index} gold {row.gold_label}, predicted {row.predicted_label} ({row.confidence:.2f}): "
              f"{row.text[:70]} -> [{row.top_words or ''}]")
    print("\nWords pushing toward each class (in how many explained errors vs correctly classified examples):")
    for label, group in report.summary.words.groupby("class", sort=False):
        print(f"  {label}: " + ", ".join(f"{w.word} {w.slice_count} vs {w.correct_count}"
                                         for w in group.head(SHOWN).itertuples()))
    shortcuts = report.shortcuts
    significant = shortcuts[shortcuts["significant"]] if shortcuts is not None else []
    print(f"\nShortcut words (Fisher's exact test, Benjamini-Hochberg q <= 0.05): {len(significant)}")
    for word in shortcuts.head(SHOWN).itertuples():
        print(f"  {word.word}: {word.errors}/{word.examples} errors ({word.error_rate:.0%} vs "
              f"{word.error_rate_without:.0%} without), p = {word.p_value:.2g}, q = {word.q_value:.2g}")
