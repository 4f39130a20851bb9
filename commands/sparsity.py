"""`cli.py sparsity`: paper 001's sparsity curves (App. E, Figs. 5-6) over a dataset, per method, with 95 % bootstrap
intervals over examples.

    python cli.py sparsity --model default --dataset sst2:dev --limit 100 \
        --methods integrated_gradients,lime --out sparsity.csv
"""
from __future__ import annotations

from commands.common import add_output_options, check_out, job_progress, parse_method_specs, print_json, write_out
from corpora import load_dataset
from evaluation.faithfulness.sparsity import SOURCE, TOP_K, dataset_sparsity
from models import cached_classifier


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("sparsity", help="paper 001's sparsity curves: importance share of the top-k "
                                                    "words and the top-x %%")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--dataset", default="sst2:dev", help="name:split or file:PATH")
    parser.add_argument("--limit", type=int, default=100, help="first N examples (0 = all)")
    parser.add_argument("--methods", default="integrated_gradients,leave_one_out,saliency",
                        help="comma-separated method[:preset] (see `cli.py methods`)")
    add_output_options(parser, "the curves", csv="one row per method x axis x point (mean, low, high, n)",
                       json="the same rows and the source")
    parser.set_defaults(handler=handle)


def handle(args) -> int:
    out = check_out(args.out)
    methods = parse_method_specs(args.methods)
    classifier = cached_classifier(args.model)
    examples = load_dataset(args.dataset, limit=args.limit or None, label_names=classifier.labels)
    bar, progress = job_progress("explaining", "example")
    frame = dataset_sparsity(classifier, examples, methods, progress=progress)
    bar.close()
    data = {"source": SOURCE, "model": args.model, "dataset": args.dataset, "examples": len(examples),
            "curves": frame.to_dict(orient="records")}
    if out:
        write_out(out, data, frame)
    if args.json:
        print_json(data)
    elif not out:
        table = frame[frame["axis"] == TOP_K].pivot(index="method", columns="x", values="mean")
        print(f"Top-k sparsity (mean share of sum |a| in the k largest |a|; {len(examples)} examples; {SOURCE}):")
        print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    return 0
