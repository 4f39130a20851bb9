"""Length bands: rows of different lengths (deletion shortens them) cut into bands of neighbouring lengths so that
few padded tokens are computed (on a CPU a padded token costs what a real one does)."""
from __future__ import annotations

import math

import numpy as np

from explainers.mask_learning.length_groups import FORWARD_OVERHEAD_TOKENS
from models import TextClassifier, TokenBatch


def length_bands(lengths: np.ndarray, overhead: int = FORWARD_OVERHEAD_TOKENS) -> list[tuple[int, int]]:
    """(shortest, longest) bands of the lengths that minimise padded tokens + ``overhead`` per band: exact by
    dynamic programming over the distinct lengths (a few dozen, however many rows)."""
    values, counts = np.unique(np.asarray(lengths, dtype=int), return_counts=True)
    before = np.concatenate([[0], np.cumsum(counts)])  # rows shorter than values[j]
    best, start = [0.0] + [math.inf] * len(values), [0] * (len(values) + 1)
    for j in range(1, len(values) + 1):
        for i in range(j):  # one band from values[i] to values[j - 1], padded to the longest
            cost = best[i] + (before[j] - before[i]) * values[j - 1] + overhead
            if cost < best[j]:
                best[j], start[j] = cost, i
    bands, j = [], len(values)
    while j > 0:
        bands.append((int(values[start[j]]), int(values[j - 1])))
        j = start[j]
    return bands[::-1]


def length_grouped_logits(classifier: TextClassifier, batch: TokenBatch) -> np.ndarray:
    """Logits of rows of different lengths (deletion shortens them) run in bands of neighbouring lengths, so that
    few padded tokens are computed (on a CPU a padded token costs what a real one does): the same logits up to
    float32 rounding (padded keys get exactly zero attention)."""
    lengths = np.array([len(ids) for ids in batch.input_ids])
    out = np.zeros((len(batch), classifier.num_labels))
    for low, high in length_bands(lengths):
        index = np.flatnonzero((lengths >= low) & (lengths <= high))

        def pick(column, rows=index):
            return None if column is None else [column[i] for i in rows]

        out[index] = classifier.predict_logits(TokenBatch(pick(batch.input_ids), pick(batch.token_type_ids),
                                                          pick(batch.zero_masks), pick(batch.readout)))
    return out
