"""Paper 000's single-word deletion grid (Figs. A17/A18; seeds-000-001.md 000.6): every word deleted in turn, the
label the model then predicts and its confidence, so a reader sees which words the prediction depends on (on SST
"Enormously entertaining for moviegoers of any age ." no single deletion moves "positive" off 1.0; on an e-SNLI pair
one deletion in 18 flips entailment to neutral).

Each row removes one span of ``width`` consecutive words (1: the paper's grid; wider spans are the phrase-level
direction of paper 000 s. 7, "deleting contiguous words has a larger effect"), through the one perturbation engine
with the chosen operator (``delete`` by default, the paper's "deletion"), all rows in one batch. Spans never cross
from the text into the pair.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from models import Encoding, Operator, TextClassifier, UserFacingError, perturbed_proba
from models.perturb import OPERATORS, resolve_operator

SOURCE = "paper 000 Figs. A17/A18 (each word deleted: the predicted label and confidence); spans: paper 000 s. 7"


def deletion_grid(classifier: TextClassifier, encoding: Encoding, operator: Operator | str = Operator.DELETE,
                  width: int = 1) -> tuple[pd.DataFrame, str | None]:
    """One row per removed span (and the original first): the removed words, the text as the model reads it (a
    removed word shown as the operator's token), the predicted label, its confidence, p(original class) and
    whether the prediction flipped; and the operator's fallback note (None when it ran as asked)."""
    if width < 1:
        raise UserFacingError("The span width must be at least 1 word.")
    n = encoding.n_words
    if n < 2:
        raise UserFacingError("The deletion grid needs at least two words (deleting the only word leaves nothing).")
    operator, note = resolve_operator(classifier, operator)
    segments = list(encoding.word_segment)
    starts = [s for s in range(n - width + 1) if len(set(segments[s:s + width])) == 1]
    if not starts:
        raise UserFacingError(f"No span of {width} words fits in one segment; lower the width.")
    keep = np.ones((len(starts), n), dtype=bool)
    for row, start in enumerate(starts):
        keep[row, start:start + width] = False
    original = classifier.proba_of(encoding)
    target = int(np.argmax(original))
    probabilities = perturbed_proba(classifier, encoding, keep, operator)
    shown = "" if operator == Operator.DELETE else OPERATORS[operator].label
    labels = classifier.labels
    rows = [{"removed": "(none: the original)", "position": None, "text": _text(encoding, np.ones(n, bool), shown),
             "prediction": labels[target], "confidence": float(original[target]),
             "p_original_class": float(original[target]), "flipped": False}]
    for start, row_keep, row in zip(starts, keep, probabilities):
        predicted = int(np.argmax(row))
        rows.append({"removed": " ".join(encoding.words[start:start + width]), "position": start,
                     "text": _text(encoding, row_keep, shown), "prediction": labels[predicted],
                     "confidence": float(row[predicted]), "p_original_class": float(row[target]),
                     "flipped": predicted != target})
    return pd.DataFrame(rows), note


def _text(encoding: Encoding, keep: np.ndarray, shown: str) -> str:
    """The words as the model reads them: removed words dropped (delete) or shown as the operator's token; a pair
    after " ‖ "."""
    parts: dict[int, list[str]] = {0: [], 1: []}
    for word, segment, kept in zip(encoding.words, encoding.word_segment, keep):
        if kept or shown:
            parts[segment].append(word if kept else shown)
    return " ".join(parts[0]) + (" ‖ " + " ".join(parts[1]) if 1 in encoding.word_segment else "")
