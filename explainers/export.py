"""Export explanations of one input as CSV (one row per method and word) or JSON (scores + provenance).

Both carry the raw scores and the scores as displayed (normalization, absolute view), so a reader can tell
exactly what a heatmap showed; the JSON keeps every explanation's full provenance. A method selected on a
metric (AML) carries its "tuned for <metric>" badge as a column (CSV) and a field (JSON): its scores on that metric
are optimistic by construction, and a reader of the file should know it without the provenance.

The JSON is one versioned layout for the command line, the app and the Python library:
``"format": "explanation-workbench/1"``, described by ``assets/schema/explanation-workbench-1.json``, with a
``kind``: ``"explanations"`` (one input, written here) or ``"run"`` (a stored dataset run, written by
``evaluation/runs/store.py``). ``read_document`` reads the explanations back, and also the two unversioned layouts
written before it (the app's ``context``/``display``/``explanations`` and ``cli.py explain --json``'s
``model``/``text``/``explanations``); run exports of the older ``"explanation-workbench-run/1"`` still import.
"""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from explainers.aggregate import NORMALIZATION_LABELS
from explainers.explanation import Explanation
from explainers.mask_learning.selection import metric_named

CSV_COLUMNS = ("method", "method_label", "family", "preset", "target", "target_label", "word_index", "word",
               "segment", "score", "display_score", "normalization", "absolute", "signed", "baseline",
               "removal_operator", "seed", "seconds", "forward_passes", "backward_passes", "model_fingerprint",
               "tuned_for", "contrast", "contrast_label")


def tuned_for(explanation: Explanation) -> str:
    """The metric an explanation was selected on (AML's badge, "" for every other method)."""
    details = explanation.provenance.get("details")
    metric = details.get("tuned_for") if isinstance(details, dict) else None
    return metric_named(metric).label if metric else ""


def contrast_columns(explanation: Explanation) -> dict:
    """The contrast class of a contrastive explanation ("why the target rather than B"); empty otherwise."""
    contrast = (explanation.provenance.get("target") or {}).get("contrast")
    return {"contrast": contrast["index"] if contrast else "", "contrast_label": contrast["label"] if contrast else ""}


def scores_csv(explanations: Sequence[Explanation], normalization: str = "none", absolute: bool = False) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for e in explanations:
        p = e.provenance
        shown = e.scores("word", normalization, absolute)
        badge = tuned_for(e)
        for index, (word, segment, raw, display) in enumerate(zip(e.words, e.word_segment, e.word_scores, shown)):
            writer.writerow({
                "method": e.method_id, "method_label": e.method_label, "family": e.family, "preset": p.get("preset"),
                "target": e.target, "target_label": e.target_label, "word_index": index, "word": word,
                "segment": segment, "score": repr(float(raw)), "display_score": repr(float(display)),
                "normalization": normalization, "absolute": absolute, "signed": e.signed,
                "baseline": p.get("baseline"), "removal_operator": p.get("removal_operator"), "seed": p.get("seed"),
                "seconds": p.get("seconds"), "forward_passes": p.get("forward_passes"),
                "backward_passes": p.get("backward_passes"), "model_fingerprint": p.get("model", {}).get("fingerprint"),
                "tuned_for": badge, **contrast_columns(e),
            })
    return out.getvalue()


FORMAT = "explanation-workbench/1"
SCHEMA_FILE = "assets/schema/explanation-workbench-1.json"
KIND_EXPLANATIONS, KIND_RUN = "explanations", "run"  # the "kind" field: one input's explanations, a dataset run
LEGACY_RUN_FORMAT = "explanation-workbench-run/1"  # run exports written before the one layout (still imported)


def is_run_document(data) -> bool:
    """A run export: ``format`` 1 with ``kind`` "run", or the older ``explanation-workbench-run/1``."""
    return isinstance(data, dict) and (data.get("format") == LEGACY_RUN_FORMAT
                                       or (data.get("format") == FORMAT and data.get("kind") == KIND_RUN))


def explanations_document(explanations: Sequence[Explanation], normalization: str = "none", absolute: bool = False,
                          context: dict | None = None, **extra) -> dict:
    """The versioned document: format, the input context, the display settings, per method scores + provenance;
    ``extra``: top-level fields a writer adds (the command line's model, prediction and skipped methods)."""
    return {
        "format": FORMAT,
        "kind": KIND_EXPLANATIONS,
        **extra,
        "context": context or {},
        "display": {"normalization": normalization, "normalization_meaning": NORMALIZATION_LABELS[normalization],
                    "absolute": absolute},
        "explanations": [{**e.to_dict(), "tuned_for": tuned_for(e),
                          "display_word_scores": [float(x) for x in e.scores("word", normalization, absolute)]}
                         for e in explanations],
    }


def scores_json(explanations: Sequence[Explanation], normalization: str = "none", absolute: bool = False,
                context: dict | None = None) -> str:
    """The versioned JSON document (``explanations_document``) as text."""
    document = explanations_document(explanations, normalization, absolute, context)
    return json.dumps(document, indent=2, ensure_ascii=False, default=str)


class FormatError(ValueError):
    """A file that is not an explanations document this version can read; the message says what to do."""


@dataclass
class Document:
    """What ``read_document`` gives back: the explanations and the context they were computed in."""

    explanations: list[Explanation]
    context: dict = field(default_factory=dict)
    display: dict = field(default_factory=dict)
    format: str = FORMAT  # the format read ("unversioned" for files written before explanation-workbench/1)


def read_document(source: str | Path | dict) -> Document:
    """A document written by ``explanations_document`` (a path, JSON text or the parsed dict), or an older
    unversioned export of the app or the command line."""
    if isinstance(source, dict):
        data = source
    else:
        text = Path(source).read_text(encoding="utf-8") if isinstance(source, Path) or not str(source).lstrip(
        ).startswith("{") else str(source)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise FormatError(f"Not a JSON document ({error.msg} at line {error.lineno}); export explanations with "
                              f"the app's 'Scores + provenance (JSON)', `cli.py explain --json` or "
                              f"Explanations.save().") from None
    if is_run_document(data):
        raise FormatError("This file is a run export (kind 'run': a dataset evaluation, sanity check or ROAR study), "
                          "not explanations of one input: import it with `cli.py roar --import FILE` or the app's "
                          "import panel.")
    version = data.get("format") if isinstance(data, dict) else None
    kind = data.get("kind", KIND_EXPLANATIONS) if version == FORMAT else KIND_EXPLANATIONS  # kind came with format 1
    if (not isinstance(data, dict) or not isinstance(data.get("explanations"), list) or version not in (FORMAT, None)
            or kind != KIND_EXPLANATIONS):
        what = (f"kind '{kind}'" if kind != KIND_EXPLANATIONS else f"format '{version}'" if version
                else "a document without a list of explanations")
        raise FormatError(f"Cannot read {what}: this version reads '{FORMAT}' (kind '{KIND_EXPLANATIONS}') and "
                          f"the unversioned exports before it; write the file again with this version.")
    context = dict(data.get("context") or {})
    if version is None and "model" in data and "context" not in data:  # cli.py explain --json before the format
        model = data.get("model") or {}
        context = {"model": model.get("name"), "fingerprint": model.get("fingerprint"), "text": data.get("text"),
                   "pair": data.get("pair"), "predicted": data.get("predicted"),
                   "probabilities": data.get("prediction") or {}}
    try:
        explanations = [Explanation.from_dict(item) for item in data["explanations"]]
    except (KeyError, TypeError, ValueError) as error:
        raise FormatError(f"An explanation in the document is incomplete ({error!r}); the file may have been "
                          f"edited or cut.") from None
    return Document(explanations, context, dict(data.get("display") or {}), version or "unversioned")
