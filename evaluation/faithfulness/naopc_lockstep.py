"""NAOPC's bounds of several inputs in lockstep (a dataset run's window of cells).

Dataset runs (target: NAOPC within 2x AOPC's cost): the run's batch hook searches the bounds of its window of
inputs in lockstep (``prefill_bounds``): step s of every input's beams, and every subset of the inputs the exact
search takes, are scored in one engine call (each input's distinct rows once, in length bands, at most
``MAX_ROWS_PER_CALL`` rows), so a window costs about max(n) calls instead of sum(n); the cells find the bounds in the
memo. Same beams and bounds as the one-input search, up to float32 rounding of the batching.


The rows of all inputs go through the engine together (``logits_of_many``), with ``curves``' rule for a row: each
input's distinct perturbed sequences once, a row that is the input itself its clean logits. ``curves.score_rows``
scores one input per call, which would undo the lockstep (one call per input and step): the batching across
inputs is what this module adds.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.faithfulness.curves import (
    RemovalOptions,
    _row,
    _score,
    base_logits,
    contrast_class,
    filler_for,
    length_grouped_logits,
)
from evaluation.faithfulness.naopc_bounds import (
    METRICS,
    Beams,
    NaopcOptions,
    Search,
    _bounds,
    _exact_from,
    _masks,
    _memo_key,
    _memoized,
    _remember,
    curve_key,
)
from models import TokenBatch
from models.perturb import perturb, perturbed_logits
from models.windows import is_document

# ----- the bounds of several inputs in lockstep (a dataset run's window) -------------------------------------
MAX_ROWS_PER_CALL = 4096  # perturbed rows per engine call: caps the token lists and logits held at once


@dataclass
class _Job:
    """One bound search of one input and curve key, driven step by step by ``prefill_bounds``."""

    encoding: object
    operator: str
    score: str
    target: int
    logits0: np.ndarray
    beams: Beams | None  # None: the exact search (one step: every subset)
    result: Search | None = None
    foil: int | None = None  # a contrast class: s(target) - s(foil)

    def keep_rows(self) -> np.ndarray:
        self.keep = _masks(self.encoding.n_words) if self.beams is None else ~self.beams.candidates()
        return self.keep

    def take(self, logits: np.ndarray) -> None:
        if self.beams is None:
            self.result = _exact_from(logits, self.encoding.n_words, self.target, self.score, self.logits0, self.foil)
            return
        self.beams.advance(_score(logits, self.target, self.score, self.foil), self.keep, logits)
        if self.beams.done:
            self.result = self.beams.search()


def prefill_bounds(classifier, encodings, targets, removal: RemovalOptions, naopc: NaopcOptions,
                   filler_options: dict | None = None, metrics=METRICS, max_rows: int = MAX_ROWS_PER_CALL) -> int:
    """The bounds of several inputs searched in lockstep and left in ``aopc_bounds``' memo under its keys; returns
    how many inputs were searched (those already memoized, and inputs without words, are left to the cells).

    Step s of every input's beams (and, in the first step, every subset of the inputs the exact search takes) is
    scored in one engine call per operator: the rows of all inputs together, each input's distinct rows once,
    in length bands, at most ``max_rows`` rows per call. A window of inputs thus costs about max(n) calls instead of
    sum(n) small ones, with the beams and bounds of ``beam_search`` / ``exact_search`` (the same steps on the same
    rows; logits equal up to float32 rounding, as any two batchings)."""
    keys = {m.id: curve_key(m, removal) for m in metrics}
    todo: dict[tuple, tuple] = {}
    for encoding, target in zip(encodings, targets):
        key = _memo_key(encoding, int(target), removal, naopc, metrics)
        if encoding.n_words > 0 and key not in todo and _memoized(classifier, key) is None:
            todo[key] = (encoding, int(target))
    jobs: dict[tuple, _Job] = {}
    for key, (encoding, target) in todo.items():
        logits0 = base_logits(classifier, encoding)
        foil = contrast_class(removal, logits0, target)
        exact = encoding.n_words <= naopc.naopc_exact_words
        for operator, score in dict.fromkeys(keys.values()):
            start = float(_score(logits0[None, :], target, score, foil)[0])
            jobs[key, operator, score] = _Job(encoding, operator, score, target, logits0,
                                              None if exact else Beams(encoding.n_words, start, naopc.naopc_beam),
                                              foil=foil)
    active = list(jobs.values())
    while active:
        for operator in dict.fromkeys(job.operator for job in active):
            group = [job for job in active if job.operator == operator]
            parts = [(job.encoding, job.keep_rows(), job.logits0) for job in group]
            for job, logits in zip(group, logits_of_many(classifier, parts, operator, filler_options, max_rows)):
                job.take(logits)
        active = [job for job in active if job.result is None]
    for key, (encoding, _) in todo.items():
        searches = {curve: jobs[(key,) + tuple(curve)].result for curve in dict.fromkeys(keys.values())}
        _remember(classifier, key, _bounds(searches, keys, metrics, removal, encoding.n_words,
                                           encoding.n_words <= naopc.naopc_exact_words))
    return len(todo)


def _kind(key: tuple) -> tuple:
    """Which optional columns a ``curves._row`` key has (rows of one batch must agree)."""
    return tuple(column is None for column in key[1:])


def _token_batch(keys: list[tuple]) -> TokenBatch:
    """The rows of ``curves._row`` keys of one kind as a batch (ids, token types, zero masks as lists; readout)."""
    def column(c):
        return None if keys[0][c] is None else [list(k[c]) if c < 3 else k[c] for k in keys]
    return TokenBatch(column(0), column(1), column(2), column(3))


def logits_of_many(classifier, parts, operator: str, filler_options: dict | None,
                   max_rows: int = MAX_ROWS_PER_CALL) -> list[np.ndarray]:
    """``curves.score_rows`` for several inputs at once: ``parts`` are (encoding, keep rows, clean logits); each
    input's distinct perturbed sequences (``curves.distinct_logits``' rule: a row that is the input itself gets its
    clean logits) of all inputs run together through ``length_grouped_logits``, ``max_rows`` per call."""
    filler = filler_for(operator, filler_options)
    outs, sequences, owners = [], [], []  # owners[j]: (part, rows of that part) that sequence j scores
    for index, (encoding, keep, logits0) in enumerate(parts):
        outs.append(np.tile(logits0, (len(keep), 1)) if len(keep) else np.zeros((0, len(logits0))))
        todo = np.flatnonzero(~keep.all(axis=1))
        if not len(todo):
            continue
        unique, inverse = np.unique(np.packbits(keep[todo], axis=1), axis=0, return_inverse=True)
        rows = np.unpackbits(unique, axis=1, count=encoding.n_words).astype(bool)
        if is_document(encoding):  # read in windows: the engine re-runs only the windows a row changes
            outs[index][todo] = perturbed_logits(classifier, encoding, rows, operator, filler)[
                np.asarray(inverse).reshape(-1)]
            continue
        batch = perturb(classifier, encoding, rows, operator, filler)
        types = encoding.token_type_ids if batch.token_type_ids else None
        itself = (tuple(encoding.input_ids), tuple(types) if types is not None else None)
        first: dict = {}
        for row in range(len(batch)):
            key = _row(batch, row)
            if (key[0], key[1]) != itself or key[2] is not None:
                first.setdefault(key, []).append(row)
        inverse = np.asarray(inverse).reshape(-1)
        for key, same in first.items():
            sequences.append(key)
            owners.append((index, todo[np.isin(inverse, same)]))
    # one call per kind of row (which columns: token types, zero masks, readout), longest first so that a call's rows
    # are of neighbouring lengths
    order = sorted(range(len(sequences)), key=lambda j: (_kind(sequences[j]), -len(sequences[j][0])))
    for low in range(0, len(order), max_rows):
        chunk = order[low:low + max_rows]
        for kind in dict.fromkeys(_kind(sequences[j]) for j in chunk):
            chosen = [j for j in chunk if _kind(sequences[j]) == kind]
            scored = length_grouped_logits(classifier, _token_batch([sequences[j] for j in chosen]))
            for j, logits in zip(chosen, scored):
                part, rows = owners[j]
                outs[part][rows] = logits
    return outs


