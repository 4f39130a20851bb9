"""NAOPC's bounds (Edin et al., ACL 2025, arXiv 2408.08137): the options of the search, the two AOPC curves it
bounds, the exact and the beam search, and the per-classifier memo every method and random ordering of an input
shares; ``naopc.py`` normalizes by them.

Bounds: the AOPC of an ordering is a sum over its prefix sets, so the best ordering is the best chain
empty set -> ... -> all words through the subset lattice. Sufficiency's AOPC of an ordering is comprehensiveness'
AOPC of the reversed ordering, so one search (per operator and score) bounds both, as in Edin et al.'s code
(github.com/JoakimEdin/naopc, ``src/evaluation/naopc_beam/bound_approximation_methods.py``: one removal curve,
searched descending and ascending). ``exact``: every subset is scored (2^n - 1 perturbed inputs in one batched
engine call) and a dynamic programme over subsets finds both bounds exactly (the same optimum as all n!
permutations); the orderings' own AOPCs are then read off the same table (no further pass). ``beam``: for inputs
longer than ``naopc_exact_words``, Edin et al.'s NAOPC_beam: a worst-first and a best-first beam over removed
prefixes (width ``naopc_beam``), advanced together so every step is one engine call and a set both reach (the first
step's n leave-one-out rows at least) is scored once; every scored ordering's AOPC is folded into the input's one
shared bound (``widen``) so NAOPC stays in [0, 1] when the beam misses the true optimum and all orderings of
an input are normalized alike. Which search ran is in the details (``search``, per
value) and in the metric's metadata (``params['bounds']``).

Width (decided from measurements, docs/faithfulness.md "NAOPC: the beam width"): the default is 1 (greedy),
the cheapest width of Edin et al.'s experiment 3 (``scripts/experiments/increasing_beam_sizes``: 1, 2, 5, 10, 15,
50). On SST-2 dev with default-quick, where the beam runs (> 8 words), width 1 gave NAOPC values within
0.005 of width 5 on average and never reordered the methods' means; width 5 costs about 2.3x the passes. Chosen again
against exact bounds (``bench/study_naopc_exact_widths.py``, 21 sentences of 9-14 words): mean |error|
0.010 / 0.006 / 0.005 / 0.004 for widths 1 / 2 / 4 / 8 at 1 / 1.23 / 1.62 / 2.18x the rows, worst 0.24 at every
width, the methods' means ranked alike at every width: width 1 stays.
Preset ``naopc-edin-beam-5``: width 5, what their experiment scripts pass (``scripts/experiments/approximate_bounds``).

Threshold: the beam takes over from 9 words (measured, docs/benchmarks.md: the exact search's 2^n rows cost more
time than the beam's small batches from 9 words on), so ``naopc_exact_words`` defaults to 8. The preset
``naopc-exact-10`` keeps the earlier default (exact up to 10 words, whatever ``naopc_exact_words`` says): on 9- and
10-word inputs its bounds are exact where the default's come from the beam.

Sharing: the bounds depend on the input, the target, the operator and the search, not on the explanation, so they
are computed once per input and memoized per classifier (``aopc_bounds``): every method and random ordering of an
input is normalized against the same search. Above the threshold the orderings' own AOPC curves are scored too; the
points the beam already scored (every leave-one-out row, the empty input, much of a greedy method's prefixes) are
taken from its rows (``ScoredRows``), not run again.

Contrast class (docs/peers.md): with a contrast class B every curve reads s(A) - s(B) (the removal curves'
``_score``: p(A) - p(B) for the probability score), and the bounds are searched on that same curve, so NAOPC ranks
an explanation among all orderings of "A rather than B"; the contrast is part of the bounds' memo key.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.faithfulness.curves import (
    RemovalMetric,
    RemovalOptions,
    _score,
    base_logits,
    contrast_class,
    effective_operator,
    score_rows,
)
from explainers.params import param, validate

EXACT, BEAM = "exact", "beam"
REFERENCE = "Edin et al., ACL 2025 (arXiv 2408.08137), s. 3-4: AOPC min-max normalized per example"


@dataclass(frozen=True)
class NaopcOptions:
    """How the bounds are searched (keys of a run's flat options dict, hence the prefix)."""

    naopc_exact_words: int = param(8, "NAOPC exact up to (words)", "inputs with at most this many words get the "
                                   "exact bounds (2^n perturbed inputs); longer ones a beam search (faster from 9 "
                                   "words)", min=1, max=16)
    naopc_beam: int = param(1, "NAOPC beam width", "orderings kept per step of the beam search (1: greedy; against "
                            "exact bounds on SST-2 mean error 0.010, worst 0.24 per input; Edin et al.'s scripts: 5, "
                            "preset naopc-edin-beam-5)", min=1, max=100)

    def __post_init__(self):
        validate(self)


_COMMON: dict[str, Any] = dict(preset="naopc", preset_label="NAOPC (Edin et al. 2025: AOPC rescaled between worst and best "
               "orderings)", range=(0.0, 1.0), operator="delete", schedule="steps", max_fraction=1.0,
               value="delta", summary="aopc", reference=REFERENCE)
# The two raw AOPC curves NAOPC normalizes (one word per step, every word; divisor n + 1).
COMPREHENSIVENESS = RemovalMetric(
    id="naopc-comprehensiveness", label="NAOPC comprehensiveness", higher_is_better=True, mode="remove",
    aopc_divisor="bins+1", curve="comprehensiveness",
    description="Comprehensiveness AOPC over every one-word removal step (divisor n + 1), rescaled to [0, 1] between "
                "the worst (0) and the best (1) ordering of the words. Comparable across models.", **_COMMON)
SUFFICIENCY = RemovalMetric(
    id="naopc-sufficiency", label="NAOPC sufficiency", higher_is_better=False, mode="keep", include_start=True,
    aopc_divisor="bins", curve="sufficiency",
    description="Sufficiency AOPC over keeping the top n, n-1, ..., 0 words (divisor n + 1), rescaled to [0, 1] "
                "between the best (0) and the worst (1) ordering. Lower is better.", **_COMMON)
METRICS = (COMPREHENSIVENESS, SUFFICIENCY)


# ----- bounds -------------------------------------------------------------------------------------------
def _masks(n: int) -> np.ndarray:
    """(2^n, n) bool: row m is the subset whose bits are set in m (bit i = word i)."""
    return ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1).astype(bool)


def chain_bounds(terms: np.ndarray, n: int) -> tuple[float, float]:
    """(min, max) over all orderings of sum_k terms[prefix_k], prefixes from the empty set to every word
    (terms indexed by subset bitmask). Dynamic programme over subsets, layer by layer of subset size."""
    size = np.array([bin(m).count("1") for m in range(2 ** n)])
    low = np.full(2 ** n, np.inf)
    high = np.full(2 ** n, -np.inf)
    low[0] = high[0] = terms[0]
    masks = np.arange(2 ** n)
    for k in range(1, n + 1):
        layer = masks[size == k]
        best_low = np.full(len(layer), np.inf)
        best_high = np.full(len(layer), -np.inf)
        for i in range(n):
            has = (layer >> i) & 1 == 1
            parents = layer[has] ^ (1 << i)
            best_low[has] = np.minimum(best_low[has], low[parents])
            best_high[has] = np.maximum(best_high[has], high[parents])
        low[layer] = terms[layer] + best_low
        high[layer] = terms[layer] + best_high
    return float(low[-1]), float(high[-1])


def curve_key(metric: RemovalMetric, removal: RemovalOptions) -> tuple[str, str]:
    """Metrics with the same key have the same set of AOPC sums over all orderings, hence the same bounds.

    Sufficiency's AOPC of an ordering is comprehensiveness' AOPC of the reversed ordering: keeping the top n - k
    words is removing the bottom k, and both sums run over k = 0..n with a 0 first term and the empty input last.
    So the two bounds coincide whenever the operator and the score do; Edin et al.'s code
    (JoakimEdin/naopc, src/evaluation/naopc_beam/bound_approximation_methods.py) likewise searches one removal
    curve, descending for comprehensiveness' upper and ascending for sufficiency's lower bound."""
    return effective_operator(metric, removal), metric.score


def divisor(metric: RemovalMetric, removal: RemovalOptions, n: int) -> int:
    """The AOPC divisor ``evaluate_orders`` uses for this metric on n words (bounds are sums; each metric scales
    them by its own divisor, so an ``aopc_divisor`` option applies to the bounds as to the AOPC)."""
    points = n + 1 if metric.include_start else n
    return points + 1 if (removal.aopc_divisor or metric.aopc_divisor) == "bins+1" else points


@dataclass
class Search:
    """One bound search of one curve key: the min and max AOPC sums (comprehensiveness formulation) and, for the
    exact search, the sum term of every removed subset (so the AOPC of any ordering is read off the table); for the
    beam, the logits of every row it scored (``rows``: the orderings' curves reuse them)."""

    low: float
    high: float
    terms: np.ndarray | None = None
    rows: ScoredRows | None = None


class ScoredRows:
    """Logits of the keep rows a beam search scored, by packed row: an ordering's curve point that the beam also
    reached (every leave-one-out row, a greedy method's prefixes, the empty input) is not run again. Arrays, not a
    dict per row: a memo of 256 inputs stays a few MB."""

    def __init__(self, n_words: int):
        self.n_words = n_words
        self._packed: list[np.ndarray] = []
        self._logits: list[np.ndarray] = []
        self._index: dict[bytes, int] | None = None
        self._all = np.zeros((0, 0))

    def add(self, keep: np.ndarray, logits: np.ndarray) -> None:
        self._packed.append(np.packbits(keep, axis=1))
        self._logits.append(np.asarray(logits))
        self._index = None

    def lookup(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(found: bool per row, logits of the found rows in row order)."""
        index = self._index
        if index is None:
            packed = np.concatenate(self._packed) if self._packed else np.zeros((0, 0), np.uint8)
            index = self._index = {row.tobytes(): i for i, row in enumerate(packed)}
            self._all = np.concatenate(self._logits) if self._logits else np.zeros((0, 0))
        where = np.array([index.get(row.tobytes(), -1) for row in np.packbits(keep, axis=1)], dtype=np.intp)
        where = where.reshape(len(keep))
        return where >= 0, self._all[where[where >= 0]]


def exact_search(classifier, encoding, operator: str, score: str, target: int, logits0, filler_options,
                 foil: int | None = None) -> Search:
    """Exact (min, max) AOPC sums: every subset scored once in one engine call, then a dynamic programme."""
    n = encoding.n_words
    logits = score_rows(classifier, encoding, _masks(n), operator, filler_options, logits0)
    return _exact_from(logits, n, target, score, logits0, foil)


def _exact_from(logits: np.ndarray, n: int, target: int, score: str, logits0, foil: int | None = None) -> Search:
    """The exact search's result from the logits of ``_masks(n)``'s keep rows (row m keeps the words of m)."""
    start = float(_score(logits0[None, :], target, score, foil)[0])
    kept = _score(logits, target, score, foil)
    terms = start - kept[(2 ** n - 1) ^ np.arange(2 ** n)]  # removed subset m: keep its complement
    terms[0] = 0.0
    low, high = chain_bounds(terms, n)
    return Search(low, high, terms)


TIE_DECIMALS = 5  # partial sums equal to this many decimals are a tie


class Beams:
    """The worst-first and the best-first beam over removed prefixes of one input (Edin et al.'s NAOPC_beam),
    advanced one removal step at a time: ``candidates`` gives the step's removed sets (the worst beam's, then the
    best's), ``advance`` takes their scores. The one-input search and the lockstep search of several inputs
    (``prefill_bounds``) drive the same steps, so they keep the same beams."""

    def __init__(self, n: int, start: float, width: int):
        self.n, self.start, self.width, self.step = n, start, width, 0
        self.beams = {-1.0: [(0.0, np.zeros(n, bool))], 1.0: [(0.0, np.zeros(n, bool))]}  # -1: worst, +1: best
        self._candidates: dict = {}
        self.rows = ScoredRows(n)

    @property
    def done(self) -> bool:
        return self.step == self.n

    def candidates(self) -> np.ndarray:
        """(rows, n) bool: the removed set of every candidate of this step, both beams."""
        n = self.n
        self._candidates = {sign: [(total, chosen | (np.arange(n) == i)) for total, chosen in beam
                                   for i in np.flatnonzero(~chosen)] for sign, beam in self.beams.items()}
        return np.array([prefix for sign in self.beams for _, prefix in self._candidates[sign]]).reshape(-1, n)

    def advance(self, scores: np.ndarray, keep: np.ndarray, logits: np.ndarray) -> None:
        """Keep the ``width`` best (worst) partial sums per beam, given the target's score of each candidate (and
        its keep row and logits, remembered for the orderings' curves)."""
        self.rows.add(keep, logits)
        offset = 0
        for sign in self.beams:
            chosen = self._candidates[sign]
            totals = np.array([c[0] for c in chosen]) + self.start - scores[offset:offset + len(chosen)]
            offset += len(chosen)
            seen, beam = set(), []
            # near-ties (float32 rounding: two batchings of the same rows) go by candidate order, so the inputs a
            # run's window batched together never change the beam (a word the model ignores ties exactly)
            for j in np.argsort(-sign * np.round(totals, TIE_DECIMALS), kind="stable"):
                key = chosen[j][1].tobytes()  # distinct prefix sets only: two orders of one set share a future
                if key in seen:
                    continue
                seen.add(key)
                beam.append((float(totals[j]), chosen[j][1]))
                if len(beam) == self.width:
                    break
            self.beams[sign] = beam
        self.step += 1

    def search(self) -> Search:
        return Search(self.beams[-1.0][0][0], self.beams[1.0][0][0], rows=self.rows)


def beam_search(classifier, encoding, operator: str, score: str, target: int, logits0, filler_options,
                width: int, foil: int | None = None) -> Search:
    """(min, max) AOPC sums found by two beam searches over removed prefixes (the words removed first), each
    keeping the ``width`` best partial sums (Edin et al.'s NAOPC_beam). Both searches advance together: every
    step's candidates of both are scored in one engine call, a removed set that both reach is scored once (the
    first step's n leave-one-out rows are always shared)."""
    beams = Beams(encoding.n_words, float(_score(logits0[None, :], target, score, foil)[0]), width)
    while not beams.done:
        keep = ~beams.candidates()
        logits = score_rows(classifier, encoding, keep, operator, filler_options, logits0)
        beams.advance(_score(logits, target, score, foil), keep, logits)
    return beams.search()


def chain_sums(terms: np.ndarray, orders: np.ndarray) -> np.ndarray:
    """The comprehensiveness AOPC sum of each ordering (rows), read off the exact search's subset table."""
    bits = np.cumsum(1 << np.asarray(orders, dtype=np.int64), axis=1)  # removed prefix of 1, 2, ..., n words
    return terms[bits].sum(axis=1)


@dataclass
class Bounds:
    search: str
    values: dict[str, tuple[float, float]]  # metric id -> (min, max) AOPC
    searches: dict = field(default_factory=dict)  # curve key -> Search (the exact table, for the orderings' AOPCs)
    keys: dict = field(default_factory=dict)  # metric id -> curve key


_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_lock = threading.Lock()
MEMO_SIZE = 256  # bounds kept per classifier: a run's window of inputs (BATCH_WINDOW) times a few presets


def _memo_key(encoding, target: int, removal: RemovalOptions, naopc: NaopcOptions, metrics) -> tuple:
    return (encoding.key, target, tuple(effective_operator(m, removal) for m in metrics), naopc.naopc_exact_words,
            naopc.naopc_beam, tuple(m.id for m in metrics), removal.aopc_divisor, removal.contrast)


def _memoized(classifier, key: tuple) -> Bounds | None:
    with _lock:
        return _cache.setdefault(classifier, OrderedDict()).get(key)


def _remember(classifier, key: tuple, bounds: Bounds) -> None:
    with _lock:
        per_model = _cache.setdefault(classifier, OrderedDict())
        per_model[key] = bounds
        while len(per_model) > MEMO_SIZE:
            per_model.popitem(last=False)


def _bounds(searches: dict, keys: dict, metrics, removal: RemovalOptions, n: int, exact: bool) -> Bounds:
    values = {}
    for metric in metrics:
        found, scale = searches[keys[metric.id]], divisor(metric, removal, n)
        values[metric.id] = (found.low / scale, found.high / scale)
    return Bounds(EXACT if exact else BEAM, values, searches, keys)


def aopc_bounds(classifier, encoding, removal: RemovalOptions, naopc: NaopcOptions, target: int,
                filler_options: dict | None = None, metrics=METRICS) -> Bounds:
    """The bounds of every metric for one input, memoized per classifier (methods and the random baseline
    of one input share them, and a dataset run's ``prefill_bounds`` fills the memo ahead); one search per curve key
    (comprehensiveness and sufficiency share one)."""
    key = _memo_key(encoding, target, removal, naopc, metrics)
    found = _memoized(classifier, key)
    if found is not None:
        return found
    logits0 = base_logits(classifier, encoding)
    foil = contrast_class(removal, logits0, target)  # the bounds of s(A) - s(B)
    n = encoding.n_words
    exact = n <= naopc.naopc_exact_words
    keys = {m.id: curve_key(m, removal) for m in metrics}
    searches = {}
    for operator, score in dict.fromkeys(keys.values()):
        searches[operator, score] = (
            exact_search(classifier, encoding, operator, score, target, logits0, filler_options, foil) if exact else
            beam_search(classifier, encoding, operator, score, target, logits0, filler_options, naopc.naopc_beam,
                        foil))
    bounds = _bounds(searches, keys, metrics, removal, n, exact)
    _remember(classifier, key, bounds)
    return bounds


# ----- the bounds widened by the orderings scored against them ------------------------------------------
def widen(bounds: Bounds, aopcs: list[dict[str, float]], metrics, removal: RemovalOptions,
          n: int) -> dict[str, tuple[float, float]]:
    """Fold the orderings' own AOPCs into the input's shared bounds, so NAOPC stays in [0, 1].

    A beam bound is the AOPC of the best (worst) ordering the beam saw, so any scored ordering that beats it is a
    better bound. One bound per input serves every ordering (methods and random orderings, now and in later calls:
    ``Bounds`` is the memoized object), improved whenever an ordering beats it, so the upper bound only rises and the
    lower only falls. Normalizing each ordering by its own AOPC instead gave every ordering above the beam's bound
    1.000. With a shared curve key comprehensiveness' and sufficiency's sums are sums of the same set of orderings
    (``curve_key``), so both metrics' AOPCs widen the one search. The exact bounds need nothing. Returns the bounds
    as they stand after these orderings (what they are normalized by; a later call may widen them further)."""
    if bounds.search != BEAM or not aopcs:
        return dict(bounds.values)
    with _lock:
        for metric in metrics:
            search, scale = bounds.searches[bounds.keys[metric.id]], divisor(metric, removal, n)
            sums = [row[metric.id] * scale for row in aopcs if np.isfinite(row[metric.id])]
            if sums:
                search.low, search.high = min(search.low, min(sums)), max(search.high, max(sums))
        for metric in metrics:
            search, scale = bounds.searches[bounds.keys[metric.id]], divisor(metric, removal, n)
            bounds.values[metric.id] = (search.low / scale, search.high / scale)
        return dict(bounds.values)


