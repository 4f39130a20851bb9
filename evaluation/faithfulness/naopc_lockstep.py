"""NAOPC's bounds of several inputs in lockstep (a dataset run's window of cells).

Dataset runs (target: NAOPC within 2x AOPC's cost): the run's batch hook searches the bounds of its window of
inputs in lockstep (``prefill_bounds``): step s of every input's beams, and every subset of the inputs the exact
search takes, are scored in one engine call (each input's distinct rows once, in length bands, at most
``MAX_ROWS_PER_CALL`` rows), so a window costs about max(n) calls instead of sum(n); the cells find the bounds in the
memo. Same beams and bounds as the one-input search, up to float32 rounding of the batching.


The rows of all inputs go through the curves engine together (``curves.score_many``: each input's distinct
perturbed sequences once, a row that is the input itself its clean logits, the sequences of all inputs in shared
batches); one call per input and step would undo the lockstep.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.faithfulness.curves import InputRows, RemovalOptions, _score, base_logits, contrast_class, score_many
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
from models import Encoding

# ----- the bounds of several inputs in lockstep (a dataset run's window) -------------------------------------
MAX_ROWS_PER_CALL = 4096  # perturbed rows per engine call: caps the token lists and logits held at once


@dataclass
class _Job:
    """One bound search of one input and curve key, driven step by step by ``prefill_bounds``."""

    encoding: Encoding
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
            parts = [InputRows(job.encoding, job.keep_rows(), job.logits0) for job in group]
            for job, logits in zip(group, score_many(classifier, parts, operator, filler_options, max_rows)):
                job.take(logits)
        active = [job for job in active if job.result is None]
    for key, (encoding, _) in todo.items():
        searches = {curve: jobs[(key,) + tuple(curve)].result for curve in dict.fromkeys(keys.values())}
        _remember(classifier, key, _bounds(searches, keys, metrics, removal, encoding.n_words,
                                           encoding.n_words <= naopc.naopc_exact_words))
    return len(todo)
