"""`cli.py counterfactuals`: LIT-style counterfactual generators on one text or a dataset, every candidate
re-predicted, the flips listed.

    python cli.py counterfactuals --model default --text "a gorgeous , witty movie" --generator hotflip
    python cli.py counterfactuals --generator word-replacer --rules "good -> bad | dull; great -> terrible" \\
        --dataset sst2:dev --limit 50 --out counterfactuals.csv

The CSV has `text` / `pair` columns: it is a dataset file (`file:counterfactuals.csv`) every page and command reads.
"""
from __future__ import annotations

from commands.common import add_output_options, check_out, job_progress, print_json, write_out
from corpora import load_dataset
from evaluation.errors.generators import (
    GENERATORS,
    MASKED_LM,
    PER_WORD,
    RULES_HELP,
    WORDS,
    dataset_counterfactuals,
    flips_frame,
    generate,
)
from models import UserFacingError, cached_classifier
from models.mlm import load_filler


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("counterfactuals", help="counterfactual generators: word replacer, masked-LM "
                                                           "substitution, HotFlip; flips re-predicted")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--generator", default="hotflip", choices=list(GENERATORS), help="which generator")
    parser.add_argument("--text", default=None, help="one input (else --dataset)")
    parser.add_argument("--pair", default=None, help="its second segment (NLI)")
    parser.add_argument("--dataset", default=None, help="name:split or file:PATH: every example (with --limit)")
    parser.add_argument("--limit", type=int, default=20, help="first N examples of --dataset")
    parser.add_argument("--rules", default="", help="word replacer: rules separated by ';' or new lines. " + RULES_HELP)
    parser.add_argument("--words", type=int, default=WORDS, help="masked LM / HotFlip: words changed, one at a time")
    parser.add_argument("--per-word", type=int, default=PER_WORD, help="masked LM: candidates per word")
    parser.add_argument("--mlm", default="mlm", help="masked LM for --generator masked-lm (see prepare-mlm)")
    add_output_options(parser, "the candidates", csv="one row per candidate (a dataset file: text, pair, ...)",
                       json="the same rows")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    out = check_out(args.out)
    if (args.text is None) == (args.dataset is None):
        raise UserFacingError("Give either --text (one input) or --dataset (its first --limit examples).")
    classifier = cached_classifier(args.model)
    options = {"rules": args.rules.replace(";", "\n"), "words": args.words, "per_word": args.per_word}
    if args.generator == MASKED_LM:
        options["filler"] = load_filler(args.mlm)
    if args.text is not None:
        flips = generate(classifier, classifier.encode(args.text, args.pair), args.generator, **options)
        frame = flips_frame(flips, list(classifier.labels))
    else:
        examples = load_dataset(args.dataset, limit=args.limit or None, label_names=classifier.labels)
        bar, progress = job_progress(f"{args.generator} counterfactuals", "example")
        frame = dataset_counterfactuals(classifier, examples, list(range(len(examples))), args.generator,
                                        progress=progress, **options)
        bar.close()
    rows = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    if out:
        write_out(out, rows, frame)
    if args.json:
        print_json(rows)
    elif not out:
        flipped = frame[frame["flipped"]] if len(frame) else frame
        print(f"{len(frame)} candidate(s), {len(flipped)} flip the prediction:")
        for row in flipped.head(20).itertuples():
            print(f"  {row.original_prediction} -> {row.prediction}  [{row.changes}]  {row.text[:80]}")
    return 0
