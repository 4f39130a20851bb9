"""Export explanations of one input as CSV (one row per method and word) or JSON (scores + provenance).

Both carry the raw scores and the scores as displayed (normalization, absolute view), so a reader can tell
exactly what a heatmap showed; the JSON keeps every explanation's full provenance. A method selected on a
metric (AML) carries its "tuned for <metric>" badge as a column (CSV) and a field (JSON): its scores on that metric
are optimistic by construction, and a reader of the file should know it without the provenance.
"""
from __future__ import annotations

import csv
import io
import json
from typing import Sequence

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
    """The contrast class of a contrastive explanation ("why the target rather than B", issue 36); empty otherwise."""
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


def scores_json(explanations: Sequence[Explanation], normalization: str = "none", absolute: bool = False,
                context: dict | None = None) -> str:
    """JSON document: the input context, the display settings, and per method scores + provenance."""
    document = {
        "context": context or {},
        "display": {"normalization": normalization, "normalization_meaning": NORMALIZATION_LABELS[normalization],
                    "absolute": absolute},
        "explanations": [{**e.to_dict(), "tuned_for": tuned_for(e),
                          "display_word_scores": [float(x) for x in e.scores("word", normalization, absolute)]}
                         for e in explanations],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, default=str)
