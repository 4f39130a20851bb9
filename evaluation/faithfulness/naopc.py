"""NAOPC: AOPC rescaled per example between the worst and the best ordering of the words (Edin et al., ACL 2025,
arXiv 2408.08137, "Normalized AOPC: Fixing Misleading Faithfulness Metrics for Feature Attribution Explainability").

AOPC depends on the model and the input as much as on the explanation, so raw values do not compare across models
(or a model and its randomized copy). NAOPC = (AOPC - AOPC_min) / (AOPC_max - AOPC_min), where the bounds are the
AOPC of the worst and the best of all n! orderings of the words under the same curve and removal operator.

Curves (Edin et al. s. 3, one word per step, K = n):
- comprehensiveness: AOPC = 1/(n+1) sum_{k=0..n} [p(x) - p(x without its top-k words)] (the k = 0 term is 0);
- sufficiency: AOPC = 1/(n+1) sum_{k=0..n} [p(x) - p(only the top-(n-k) words)], the least important removed
  first. NAOPC keeps each AOPC's direction: comprehensiveness higher is better, sufficiency lower.

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

Dataset runs (target: NAOPC within 2x AOPC's cost): the run's batch hook searches the bounds of its window of
inputs in lockstep (``prefill_bounds``): step s of every input's beams, and every subset of the inputs the exact
search takes, are scored in one engine call (each input's distinct rows once, in length bands, at most
``MAX_ROWS_PER_CALL`` rows), so a window costs about max(n) calls instead of sum(n); the cells find the bounds in the
memo. Same beams and bounds as the one-input search, up to float32 rounding of the batching.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from evaluation.baselines import orderings_seed
from evaluation.faithfulness.curves import (
    RemovalMetric,
    RemovalOptions,
    _row,
    _score,
    base_logits,
    contrast_class,
    effective_operator,
    filler_for,
    keep_rows,
    length_grouped_logits,
    n_units,
    random_orders,
    rank_words,
    score_rows,
    summarize_points,
    target_class,
)
from evaluation.faithfulness.pinned_preset import PinnedPreset
from evaluation.faithfulness.presets import metric_record
from evaluation.metric import BatchResult, Evaluator, MetricValues, RunOptions, register_evaluator
from explainers.params import options_from, param, validate
from models import TokenBatch
from models.perturb import perturb, perturbed_logits
from models.windows import is_document

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


_COMMON = dict(preset="naopc", preset_label="NAOPC (Edin et al. 2025: AOPC rescaled between worst and best "
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
        self.n_words, self._packed, self._logits, self._index = n_words, [], [], None

    def add(self, keep: np.ndarray, logits: np.ndarray) -> None:
        self._packed.append(np.packbits(keep, axis=1))
        self._logits.append(np.asarray(logits))
        self._index = None

    def lookup(self, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(found: bool per row, logits of the found rows in row order)."""
        if self._index is None:
            packed = np.concatenate(self._packed) if self._packed else np.zeros((0, 0), np.uint8)
            self._index = {row.tobytes(): i for i, row in enumerate(packed)}
            self._all = np.concatenate(self._logits) if self._logits else np.zeros((0, 0))
        where = np.array([self._index.get(row.tobytes(), -1) for row in np.packbits(keep, axis=1)], dtype=int)
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
    searches: dict = None  # curve key -> Search (the exact table, for the AOPCs of the orderings)
    keys: dict = None  # metric id -> curve key


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


def normalize(aopc: float, low: float, high: float) -> float:
    """(AOPC - min) / (max - min); NaN when every ordering gives the same AOPC (nothing to rank)."""
    if not high > low:
        return float("nan")
    return float((aopc - low) / (high - low))


# ----- the evaluator ------------------------------------------------------------------------------------
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


def _normalized(aopcs: list[dict[str, float]], bounds: Bounds, metrics, removal: RemovalOptions,
                n: int) -> list[MetricValues]:
    """Every ordering against the one shared bound of its input (``widen`` first)."""
    shared = widen(bounds, aopcs, metrics, removal, n)
    out = []
    for aopc_of in aopcs:
        values, details = {}, {}
        for metric in metrics:
            aopc = aopc_of[metric.id]
            low, high = shared[metric.id]
            values[metric.id] = normalize(aopc, low, high)
            details[metric.id] = {"aopc": aopc, "aopc_min": low, "aopc_max": high, "search": bounds.search,
                                  "reference": REFERENCE}
        out.append(MetricValues(values, details=details))  # the curves are the raw AOPC's: not repeated
    return out


def _exact_aopcs(bounds: Bounds, metrics, orders: np.ndarray, removal: RemovalOptions, n: int):
    """Each ordering's AOPCs from the exact search's table: its curves are prefixes of subsets already scored, so
    they cost no forward pass. Sufficiency of an ordering = comprehensiveness of the reversed one."""
    out = [{} for _ in range(len(orders))]
    for metric in metrics:
        terms = bounds.searches[bounds.keys[metric.id]].terms
        sums = chain_sums(terms, orders if metric.mode == "remove" else orders[:, ::-1])
        for row, total in zip(out, sums):
            row[metric.id] = float(total / divisor(metric, removal, n))
    return out


def _beam_aopcs(classifier, encoding, bounds: Bounds, metrics, orders: np.ndarray, removal: RemovalOptions,
                target: int, logits0, filler_options, foil: int | None = None) -> list[dict[str, float]]:
    """Each ordering's AOPCs as ``evaluate_orders`` computes them (its points, ``summarize_points``), with the curve
    points the beam search already scored taken from its rows: only the others go through the engine (one call per
    operator, each distinct row once)."""
    units = n_units(encoding, removal)
    out = [{} for _ in range(len(orders))]
    by_operator: dict[str, list] = {}
    for metric in metrics:
        by_operator.setdefault(bounds.keys[metric.id][0], []).append(metric)
    for operator, group in by_operator.items():
        layout = [(metric, index, *metric.points_for(encoding.n_words, units, None))
                  for metric in group for index in range(len(orders))]
        keep = np.concatenate([keep_rows(orders[index], counts, metric.mode) for metric, index, counts, _ in layout])
        forced = np.concatenate([np.full(len(c), m.mode == "keep" and m.empty == "zero") & (c == 0)
                                 for m, _, c, _ in layout])
        logits = np.tile(logits0, (len(keep), 1))
        found = np.zeros(len(keep), bool)
        for metric in group:  # the rows of this operator's searches (one per score; the same rows' logits)
            seen, known = bounds.searches[bounds.keys[metric.id]].rows.lookup(keep)
            fresh = seen & ~found & ~forced
            logits[fresh] = known[fresh[seen]]
            found |= fresh
        todo = ~found
        logits[todo] = score_rows(classifier, encoding, keep[todo], operator, filler_options, logits0,
                                  skip=forced[todo])
        offset = 0
        for metric, index, counts, x in layout:
            part = logits[offset:offset + len(counts)]
            offset += len(counts)
            start = float(_score(logits0[None, :], target, metric.score, foil)[0])
            scores = _score(part, target, metric.score, foil) if len(part) else np.zeros(0)
            out[index][metric.id] = summarize_points(metric, counts, x, scores, start, None, units, removal) \
                if len(counts) else metric.no_points_value
    return out


def score_orders(classifier, encoding, orders: np.ndarray, options: dict, example=None, explanation=None,
                 metrics=METRICS) -> tuple[list[MetricValues], Bounds]:
    """NAOPC of each ordering (rows of ``orders``) of one input, with the bounds they share."""
    removal = RemovalOptions.from_dict(options)
    naopc = options_from(NaopcOptions, options)
    logits0 = base_logits(classifier, encoding)
    target = target_class(removal, logits0, example, explanation, contrast_ok=True)
    foil = contrast_class(removal, logits0, target, explanation)  # refuses an explanation of another contrast
    bounds = aopc_bounds(classifier, encoding, removal, naopc, target, options, metrics)
    n = encoding.n_words
    orders = np.atleast_2d(np.asarray(orders, dtype=int))
    if orders.shape[1] != n:  # as evaluate_orders says it on the beam path
        raise ValueError(f"orderings have {orders.shape[1]} words; the input has {n}")
    if bounds.search == EXACT:
        aopcs = _exact_aopcs(bounds, metrics, orders, removal, n)
    else:
        aopcs = _beam_aopcs(classifier, encoding, bounds, metrics, orders, removal, target, logits0, options, foil)
    return _normalized(aopcs, bounds, metrics, removal, n), bounds


PRESETS = (
    PinnedPreset("naopc", COMPREHENSIVENESS.preset_label, "naopc_exact_words", None),
    PinnedPreset("naopc-exact-10", "NAOPC with exact bounds up to 10 words (the former default; slower on "
                "9-10 words, exact where the default uses the beam)", "naopc_exact_words", 10, "exact-10"),
    # Edin et al.'s experiment scripts (scripts/experiments/approximate_bounds/*) pass --beam_size 5; their experiment 3
    # (scripts/experiments/increasing_beam_sizes) sweeps 1, 2, 5, 10, 15, 50. The default here is 1 (measured)
    PinnedPreset("naopc-edin-beam-5", "NAOPC with Edin et al.'s beam width 5 above the exact threshold (their "
                "experiment scripts; about twice the default's passes)", "naopc_beam", 5, "edin-beam-5"),
    # the greedy width pinned (the default's width; kept so stored runs' [beam-1] ids still resolve)
    PinnedPreset("naopc-beam-1", "NAOPC with a greedy beam (width 1) above the exact threshold, pinned: the "
                "cheapest width Edin et al. study (experiment 3)", "naopc_beam", 1, "beam-1"),
)
BY_ID = {preset.id: preset for preset in PRESETS}


def compute_for(preset: PinnedPreset):
    def compute(classifier, encoding, explanation, example, options) -> MetricValues:
        options = preset.options(options)
        removal = RemovalOptions.from_dict(options)
        order = rank_words(explanation.word_scores, removal.seed, removal.rank_by)
        return preset.rename(score_orders(classifier, encoding, order[None, :], options, example, explanation)[0][0])
    return compute


compute = compute_for(BY_ID["naopc"])


def naopc_batch(evaluators, classifier, encoding, example, explanations: dict, options: dict,
                n_random: int) -> BatchResult:
    """Every method and ``n_random`` random orderings of one input against one search for the bounds (per preset:
    presets with the same threshold for this input share the search through ``aopc_bounds``' memo)."""
    result = BatchResult()
    removal = RemovalOptions.from_dict(options)
    first = next(iter(explanations.values()), None)
    ranked = [rank_words(e.word_scores, removal.seed, removal.rank_by) for e in explanations.values()]
    seed = orderings_seed(options_from(RunOptions, options).seed, encoding.key)
    orders = np.vstack(ranked + [random_orders(encoding.n_words, n_random, seed)])
    if not len(orders):
        return result
    for chosen in evaluators:
        preset = BY_ID[chosen.id]
        scored, _ = score_orders(classifier, encoding, orders, preset.options(options), example, first)
        scored = [preset.rename(values) for values in scored]
        result.values[chosen.id] = dict(zip(explanations, scored[:len(ranked)]))
        for metric in chosen.metrics if n_random > 0 else ():
            result.random.setdefault(metric.id, [v[metric.id] for v in scored[len(ranked):]])
    return result


def _search(preset: PinnedPreset | None = None) -> str:
    if preset is None or preset.value is None:
        return ("exact bounds up to naopc_exact_words words (default 8), beam search (naopc_beam, default 1: greedy, "
                "the cheapest width of Edin et al.'s experiment 3) above; the search used is in each value's details")
    if preset.option == "naopc_beam":
        source = " (as Edin et al.'s experiment scripts pass it)" if preset.value == 5 else ""
        return (f"exact bounds up to naopc_exact_words words (default 8), beam search of width {preset.value} "
                f"above{source}")
    return f"exact bounds up to {preset.value} words, beam search (naopc_beam, default 1) above"


def _records(preset: PinnedPreset) -> tuple:
    records = []
    for metric in METRICS:
        record = metric_record(metric)
        record = replace(record, params={**record.params, "bounds": _search(preset)})
        if preset.suffix:
            what = (f"beam width {preset.value}" if preset.option == "naopc_beam" else
                    f"exact up to {preset.value} words")
            record = replace(record, id=f"{record.id}[{preset.suffix}]", preset=preset.id,
                             label=f"{record.label} ({what})")
        records.append(record)
    return tuple(records)


SEARCH = _search()
EVALUATORS_BY_PRESET = {preset.id: register_evaluator(Evaluator(
    id=preset.id, label=preset.label, metrics=_records(preset), compute=compute_for(preset), batch=naopc_batch))
    for preset in PRESETS}
EVALUATOR = EVALUATORS_BY_PRESET["naopc"]
