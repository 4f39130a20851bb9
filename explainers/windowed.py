"""Explaining a document read in windows (issue 32; the windows are ``models/windows.py``'s).

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

import numpy as np

from models import Encoding
from models.windows import DocumentEncoding, blend, is_document

from explainers.aggregate import aggregate_to_words

WHOLE_DOCUMENT_FAMILIES = ("perturbation", "mlm", "baseline", "ensemble")
WHOLE_DOCUMENT_METHODS = ("marc",)  # its own segments (paper 002 App. A.1)


def reads_whole_document(explainer) -> bool:
    return explainer.family in WHOLE_DOCUMENT_FAMILIES or explainer.id in WHOLE_DOCUMENT_METHODS


def by_windows(explainer, encoding: Encoding) -> bool:
    """True when this method explains this input window by window."""
    return is_document(encoding) and not reads_whole_document(explainer)


def word_scores_of(attribution, encoding: Encoding, aggregation: str) -> np.ndarray:
    if attribution.token_scores is not None:
        return aggregate_to_words(np.asarray(attribution.token_scores, dtype=np.float64), encoding.token_word,
                                  encoding.n_words, aggregation)
    return np.asarray(attribution.word_scores, dtype=np.float64)


def explain_in_windows(explainer, classifier, document: DocumentEncoding, target: int) -> dict:
    """Each window explained for ``target``, blended: word scores of the document, the first window's baseline,
    details (the windows and the blend) and the windows' warnings (each once)."""
    attributions = [explainer.attribute(classifier, w.encoding, target) for w in document.windows]
    per_window = [word_scores_of(a, w.encoding, explainer.word_aggregation)
                  for a, w in zip(attributions, document.windows)]
    warnings = list(dict.fromkeys(text for a in attributions for text in a.warnings))
    return {"word_scores": blend(document, per_window), "baseline": attributions[0].baseline,
            "details": {"windows": document.describe(), "explained": "per window, overlaps blended linearly",
                        "window_details": [a.details for a in attributions][:3]},
            "warnings": warnings}
