"""`cli.py explain`: explanations of one input by any methods, as a table or JSON (with provenance)."""
from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd
from tqdm import tqdm

import settings
from commands.common import (
    add_method_options,
    add_output_options,
    check_out,
    parse_method_options,
    parse_method_specs,
    print_json,
    write_out,
)
from commands.documents import add_document_options, document_options_of
from corpora import normalize_typed_text
from evaluation.targets import cli_contrast
from explainers import create, parse_spec
from explainers.cache import DEFAULT_CACHE, explain_cached
from explainers.export import explanations_document
from models import UserFacingError, load_classifier
from models.documents import read_input
from models.granularity import is_units
from models.windows import document_of


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("explain", help="explain one input with one or more methods")
    parser.add_argument("--model", default="default", help="built-in name, folder or hub id")
    parser.add_argument("--text", required=True,
                        help="the input; split as the datasets are (punctuation and n't / 's become words)")
    parser.add_argument("--pair", default=None, help="second segment (sentence pairs, e.g. NLI hypothesis)")
    parser.add_argument("--target", type=int, default=None, help="class index to explain (default: predicted)")
    parser.add_argument("--contrast", type=cli_contrast, default=None,
                        help="explain 'why the target rather than this class': a class index or 'runner-up'; the "
                             "explained output is the method's score of the target minus that of this class "
                             "(logit difference with output=logit, probability difference with probability)")
    add_method_options(parser)
    add_output_options(parser, "the explanations", csv="one row per method and word",
                       json="scores, prediction and provenance")
    parser.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    add_document_options(parser)
    parser.add_argument("--fast", action=argparse.BooleanOptionalAction, default=None,
                        help="reduced precision (bf16/fp16 autocast) where the device has it; each explanation's "
                             "provenance gives the measured max |dp| against full precision (default: EXWB_FAST)")
    parser.set_defaults(handler=handle)


def contrast_label(explanation) -> str:
    """The contrast class of an explanation's CSV rows ("" without one)."""
    contrast = explanation.provenance["target"].get("contrast")
    return contrast["label"] if contrast else ""


def words_table(explanations) -> pd.DataFrame:
    """One row per (method, word): the CSV form of the explanations."""
    return pd.DataFrame([{"method": e.method_id, "target": e.target_label, "contrast": contrast_label(e),
                          "word_index": i, "word": word, "score": float(score)}
                         for e in explanations for i, (word, score) in enumerate(zip(e.words, e.word_scores))],
                        columns=["method", "target", "contrast", "word_index", "word", "score"])


def handle(args) -> int:
    out = check_out(args.out)
    specs = parse_method_specs(args.methods)
    presets, overrides = parse_method_options(args.preset, args.param)
    classifier = load_classifier(args.model)
    if args.fast if args.fast is not None else settings.fast_mode():
        classifier = classifier.fast_variant()
        if classifier.autocast_dtype is None:
            print(f"note: {classifier.warnings[-1]}", file=sys.stderr)
    text = normalize_typed_text(args.text)
    pair = normalize_typed_text(args.pair) if args.pair is not None else None
    if (text, pair) != (args.text, args.pair):
        print(f"note: split as the datasets are: {text!r}" + (f" / {pair!r}" if pair is not None else ""),
              file=sys.stderr)
    encoding = read_input(classifier, text, pair, document_options_of(args))  # long texts in windows, never cut
    probabilities = classifier.proba_of(encoding)
    explanations, errors = [], {}
    for spec in tqdm(specs, desc="explaining", unit="method", file=sys.stderr, disable=len(specs) < 2):
        method, preset = parse_spec(spec)
        explainer = create(method, preset=preset or presets.get(method), contrast=args.contrast,
                           **overrides.get(method, {}))
        try:
            explanations.append(explain_cached(explainer, classifier, encoding, args.target,
                                               cache=None if args.no_cache else DEFAULT_CACHE))
        except UserFacingError as error:  # e.g. a method that needs a masked LM that is not prepared
            if len(specs) == 1:
                raise
            errors[spec] = str(error)
            tqdm.write(f"skipped {spec}: {error}", file=sys.stderr)
    prediction = {label: float(p) for label, p in zip(classifier.labels, probabilities)}
    predicted = classifier.labels[int(np.argmax(probabilities))]
    # the one versioned layout of the app and the library (explainers/export.py), with the command's own fields
    report = explanations_document(
        explanations, context={"model": classifier.name, "fingerprint": classifier.fingerprint, "text": encoding.text,
                               "pair": encoding.pair, "predicted": predicted, "probabilities": prediction},
        model=classifier.describe(), text=encoding.text, pair=encoding.pair,
        truncated_tokens=encoding.truncated_tokens, prediction=prediction, predicted=predicted, skipped=errors,
        windows=document.describe() if (document := document_of(encoding)) is not None else None,
        units=encoding.describe() if is_units(encoding) else None)
    if out:
        write_out(out, report, words_table(explanations))
    if args.json:
        print_json(report)
        return 0
    print(f"model {classifier.name} ({classifier.fingerprint}); predicted {report['predicted']} "
          f"({max(probabilities):.1%})")
    for e in explanations[:1]:
        target = e.provenance["target"]
        if target.get("contrast"):
            print(f"contrast: why {target['label']} rather than {target['contrast']['label']} "
                  f"(each method's score of {target['label']} minus that of {target['contrast']['label']})")
    if encoding.truncated_tokens:
        print(f"note: {encoding.truncated_tokens} tokens beyond the model's {classifier.max_length} were cut.")
    if report["windows"]:
        w = report["windows"]
        print(f"note: {encoding.n_words} words read in {w['windows']} overlapping windows of {w['window_tokens']} "
              f"tokens (stride {w['stride_tokens']}); prediction = {w['aggregate_rule']}.")
    if report["units"]:
        print(f"note: {report['units']['units']} {report['units']['granularity']} units are the players"
              + "".join(f"; {note}" for note in report["units"]["notes"]) + ".")
    for warning in dict.fromkeys(w for e in explanations for w in e.warnings):  # each once, not once per method
        print(f"warning: {warning}")
    for e in explanations:
        p = e.provenance
        top = ", ".join(f"{w} {s:+.3g}" for w, s in zip(e.top_words(3), e.word_scores[e.ranking()[:3]]))
        badge = (p.get("details") or {}).get("badge")  # a method selected on a metric (AML: "tuned for ...")
        print(f"{e.method_id:24s} {p['seconds']:7.3f}s fwd {p['forward_passes']:5d} bwd {p['backward_passes']:4d}  top: {top}"
              + (f"  [{badge}]" if badge else ""))
    return 0
