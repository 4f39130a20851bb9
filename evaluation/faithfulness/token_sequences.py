"""Perturbed rows as token sequences: each distinct sequence of an input classified once, and the sequences of
several inputs classified together (the curves engine's ``score_many``).

Distinct removed sets can give one sequence: the masked LM's top-1 word is often the removed word itself (ROAD,
DeletionBERT: about a quarter of the rows on DeletionBERT's grid), and deleting one of two adjacent equal words gives
one text. The same ids give the same logits, so values do not change.
"""
from __future__ import annotations

import numpy as np

from evaluation.faithfulness.length_bands import length_grouped_logits
from models import Encoding, TextClassifier, TokenBatch


def sequence_key(batch: TokenBatch, i: int) -> tuple:
    """Row i of ``batch`` as a hashable key: (ids, token types, zero masks, readout), None for a missing column."""
    return (tuple(batch.input_ids[i]), tuple(batch.token_type_ids[i]) if batch.token_type_ids else None,
            tuple(batch.zero_masks[i]) if batch.zero_masks else None, batch.readout[i] if batch.readout else None)


def distinct_sequences(encoding: Encoding, batch: TokenBatch) -> tuple[dict[tuple, list[int]], list[int]]:
    """(each distinct sequence of ``batch`` -> its rows, the rows that are the input itself: its clean logits)."""
    types = encoding.token_type_ids if batch.token_type_ids else None
    itself = (tuple(encoding.input_ids), tuple(types) if types is not None else None)
    distinct: dict[tuple, list[int]] = {}
    unchanged = []
    for i in range(len(batch)):
        key = sequence_key(batch, i)
        if (key[0], key[1]) != itself or key[2] is not None:
            distinct.setdefault(key, []).append(i)
        else:
            unchanged.append(i)
    return distinct, unchanged


def _kind(key: tuple) -> tuple:
    """Which optional columns a key has (rows of one batch must agree)."""
    return tuple(column is None for column in key[1:])


def _token_batch(keys: list[tuple]) -> TokenBatch:
    """Keys of one kind as a batch (ids, token types, zero masks as lists; readout)."""
    def column(c):
        return None if keys[0][c] is None else [list(k[c]) if c < 3 else k[c] for k in keys]
    return TokenBatch(column(0), column(1), column(2), column(3))


def classify_sequences(classifier: TextClassifier, keys: list[tuple], max_rows: int | None = None) -> np.ndarray:
    """Logits of each key's sequence: one call per kind of row (which columns: token types, zero masks, readout),
    longest first so that a call's rows are of neighbouring lengths, in length bands, at most ``max_rows`` per call
    (None: one call). ``predict_logits`` sorts rows by length, stably, so one input's sequences are batched as in
    the order they came in."""
    out = np.zeros((len(keys), classifier.num_labels))
    order = sorted(range(len(keys)), key=lambda j: (_kind(keys[j]), -len(keys[j][0])))
    step = max_rows or max(len(order), 1)
    for low in range(0, len(order), step):
        chunk = order[low:low + step]
        for kind in dict.fromkeys(_kind(keys[j]) for j in chunk):
            chosen = [j for j in chunk if _kind(keys[j]) == kind]
            out[chosen] = length_grouped_logits(classifier, _token_batch([keys[j] for j in chosen]))
    return out
