"""Explaining a document read in windows (the windows are ``models/windows.py``'s).

Two ways, by what a method needs:
- **whole document**: methods that only remove words (perturbation, masked-LM fill, baselines, ensembles of
  members) run on the document itself: the one perturbation engine removes words in the document and re-runs only
  the windows that hold them (``models.windows.perturbed_document_logits``). MaRC optimizes its own overlapping
  segments (paper 002 App. A.1) and also reads the whole document.
- **per window, blended**: gradient, attention and learned-mask (AML) methods explain each window's encoding for
  the document's target class; a word in an overlap gets the linear blend of its windows' word scores
  (``models.windows.blend``: in an overlap of m words the earlier window's weight falls m/(m+1) ... 1/(m+1),
  the later one's rises 1/(m+1) ... m/(m+1)). Scores are word scores (sub-word tokens summed per window first).
  Each window's gradient is of that window's target score, not of the document's aggregate (under the mean the
  document's gradient is the windows' gradients summed and divided by the number of windows: the same ranking
  inside a window, a scale factor apart).
"""
from __future__ import annotations

import math

import numpy as np

from explainers.aggregate import aggregate_to_words
from models import Encoding, InputError
from models.granularity import is_units
from models.windows import DocumentEncoding, blend, document_of, is_document

WHOLE_DOCUMENT_FAMILIES = ("perturbation", "mlm", "baseline", "ensemble")
WHOLE_DOCUMENT_METHODS = ("marc",)  # its own segments (paper 002 App. A.1)
REMOVAL_FAMILIES = ("perturbation", "mlm", "baseline")
ONE_PASS_METHODS = ("aml",)  # its attribution model appends a position to one input: no window of full length  # take sentences / spans as their players


def reads_whole_document(explainer) -> bool:
    return explainer.family in WHOLE_DOCUMENT_FAMILIES or explainer.id in WHOLE_DOCUMENT_METHODS


def by_windows(explainer, encoding: Encoding) -> bool:
    """True when this method cannot run on this input as it is: a document it explains window by window, or
    sentence / span units for a method that scores words (its word scores are summed per unit)."""
    if is_units(encoding):
        return explainer.family not in REMOVAL_FAMILIES
    return is_document(encoding) and not reads_whole_document(explainer)


def explain_adapted(explainer, classifier, encoding: Encoding, target: int) -> dict:
    """What ``by_windows`` asks for, as the fields of an ``Attribution``."""
    if not is_units(encoding):
        document = document_of(encoding)
        if document is None:
            raise ValueError("explain_adapted reads a document or sentence / span units; check by_windows first")
        return explain_in_windows(explainer, classifier, document, target)
    base = encoding.base
    if isinstance(base, DocumentEncoding) and by_windows(explainer, base):
        inner = explain_in_windows(explainer, classifier, base, target)
    else:
        attribution = explainer.attribute(classifier, base, target)
        inner = {"word_scores": word_scores_of(attribution, base, explainer.word_aggregation),
                 "baseline": attribution.baseline, "details": attribution.details, "warnings": attribution.warnings}
    per_unit = np.bincount(encoding.unit_of_word, weights=inner["word_scores"], minlength=len(encoding.groups))
    return {**inner, "word_scores": per_unit,
            "details": {**inner["details"], "units": "word scores summed per unit (the method scores words)"}}


def word_scores_of(attribution, encoding: Encoding, aggregation: str) -> np.ndarray:
    if attribution.token_scores is not None:
        return aggregate_to_words(np.asarray(attribution.token_scores, dtype=np.float64), encoding.token_word,
                                  encoding.n_words, aggregation)
    return np.asarray(attribution.word_scores, dtype=np.float64)


def explain_in_windows(explainer, classifier, document: DocumentEncoding, target: int) -> dict:
    """Each window explained for ``target``, blended: word scores of the document, the first window's baseline,
    details (the windows and the blend) and the windows' warnings (each once)."""
    if explainer.id in ONE_PASS_METHODS:
        raise InputError(f"This text is longer than the {classifier.max_length} tokens the model reads (it is read "
                         f"in {len(document.windows)} windows), and {explainer.label}'s attribution model reads one "
                         f"input with one position more: shorten it, or use MaRC (overlapping segments) or a removal "
                         f"method on the whole document.")
    attributions = [explainer.attribute(classifier, w.encoding, target) for w in document.windows]
    per_window = [word_scores_of(a, w.encoding, explainer.word_aggregation)
                  for a, w in zip(attributions, document.windows)]
    warnings = list(dict.fromkeys(text for a in attributions for text in a.warnings))
    return {"word_scores": blend(document, per_window), "baseline": attributions[0].baseline,
            "details": {"windows": document.describe(), "explained": "per window, overlaps blended linearly",
                        "window_details": [a.details for a in attributions][:3]},
            "warnings": warnings}


# ----- cost (explainers/plan.py) ---------------------------------------------------------------------------------
def one_pass_input(encoding: Encoding) -> Encoding:
    """What one forward pass reads: a document's first window, else the input itself."""
    document = document_of(encoding)
    return encoding if document is None else document.windows[0].encoding


def tokens_per_pass(encoding: Encoding) -> int:
    return one_pass_input(encoding).n_tokens


def estimate_passes(explainer, encoding: Encoding) -> tuple[int, int]:
    """Expected (forward, backward) window passes: per-window methods add their windows' passes; removal methods'
    rows re-run the windows that hold the removed words (about the overlap share more than one per row), plus the
    unperturbed windows; MaRC optimizes every segment."""
    document = document_of(encoding)
    if document is None:
        return explainer.estimate_passes(encoding)
    if by_windows(explainer, document):
        passes = [explainer.estimate_passes(w.encoding) for w in document.windows]
        return sum(f for f, _ in passes), sum(b for _, b in passes)
    forward, backward = explainer.estimate_passes(encoding)
    if explainer.id in WHOLE_DOCUMENT_METHODS:
        return forward * len(document.windows), backward * len(document.windows)
    coverage = sum(len(w.words) for w in document.windows) / max(1, document.n_words)
    return math.ceil(forward * coverage) + len(document.windows), backward
