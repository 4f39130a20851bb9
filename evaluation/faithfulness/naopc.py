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
empty set -> ... -> all words through the subset lattice. ``exact``: every subset is scored (2^n perturbed
inputs in one batched engine call) and a dynamic programme over subsets finds both bounds exactly (the same
optimum as all n! permutations). ``beam``: for inputs longer than ``naopc_exact_words``, a beam search over
prefixes (width ``naopc_beam``, as Edin et al. do) for each bound; the explanation's own AOPC is folded into the
bounds so NAOPC stays in [0, 1] when the beam misses the true optimum. Which search ran is in the details
(``search``, per value) and in the metric's metadata (``params['bounds']``).

Threshold: the beam takes over from 9 words (measured, docs/benchmarks.md: the exact search's 2^n rows cost more
time than the beam's small batches from 9 words on), so ``naopc_exact_words`` defaults to 8. The preset
``naopc-exact-10`` keeps the earlier default (exact up to 10 words, whatever ``naopc_exact_words`` says): on 9- and
10-word inputs its bounds are exact where the default's come from the beam.

Sharing: the bounds depend on the input, the target, the operator and the search, not on the explanation, so they
are computed once per input and memoized per classifier (``aopc_bounds``): every method and random ordering of an
input is normalized against the same search.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass, replace

import numpy as np

from explainers.params import options_from, param, validate

from evaluation.faithfulness.curves import (RemovalMetric, RemovalOptions, _score, base_logits, effective_operator,
                                            evaluate_orders, random_orders, rank_words, score_rows, target_class)
from evaluation.faithfulness.pinned_preset import PinnedPreset
from evaluation.faithfulness.presets import metric_record
from evaluation.faithfulness.random_band import orderings_seed
from evaluation.metric import BatchResult, Evaluator, MetricValues, RunOptions, register_evaluator

EXACT, BEAM = "exact", "beam"
REFERENCE = "Edin et al., ACL 2025 (arXiv 2408.08137), s. 3-4: AOPC min-max normalized per example"


@dataclass(frozen=True)
class NaopcOptions:
    """How the bounds are searched (keys of a run's flat options dict, hence the prefix)."""

    naopc_exact_words: int = param(8, "NAOPC exact up to (words)", "inputs with at most this many words get the "
                                   "exact bounds (2^n perturbed inputs); longer ones a beam search (faster from 9 "
                                   "words)", min=1, max=16)
    naopc_beam: int = param(5, "NAOPC beam width", "orderings kept per step of the beam search (Edin et al.: 5)",
                            min=1, max=100)

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


def exact_bounds(classifier, encoding, metrics, removal: RemovalOptions, target: int, logits0, filler_options):
    """Exact (min, max) AOPC of each metric: every subset scored once, shared by comprehensiveness (subset
    removed) and sufficiency (subset kept)."""
    n = encoding.n_words
    subsets = _masks(n)
    bounds = {}
    by_operator: dict[str, np.ndarray] = {}
    for metric in metrics:
        operator = effective_operator(metric, removal)
        if operator not in by_operator:
            keep = subsets  # keep row m = the words of subset m
            by_operator[operator] = score_rows(classifier, encoding, keep, operator, filler_options, logits0)
        logits = by_operator[operator]
        start = float(_score(logits0[None, :], target, metric.score)[0])
        kept_scores = _score(logits, target, metric.score)
        # comprehensiveness: prefix S removed -> keep the complement (bitmask ^ all); sufficiency: keep S
        scores = kept_scores[(2 ** n - 1) ^ np.arange(2 ** n)] if metric.mode == "remove" else kept_scores
        terms = (start - scores) / (n + 1)
        if metric.mode == "remove":
            terms[0] = 0.0
        bounds[metric.id] = chain_bounds(terms, n)
    return bounds


def beam_bounds(classifier, encoding, metric: RemovalMetric, removal: RemovalOptions, target: int, logits0,
                filler_options, width: int) -> tuple[float, float]:
    """(min, max) AOPC found by two beam searches over prefixes (the words chosen first), each keeping the
    ``width`` best partial sums; every step's candidates are scored in one engine call."""
    n = encoding.n_words
    operator = effective_operator(metric, removal)
    start = float(_score(logits0[None, :], target, metric.score)[0])
    empty_term = 0.0
    if metric.mode == "keep":  # k = n term: nothing kept
        empty = score_rows(classifier, encoding, np.zeros((1, n), bool), operator, filler_options, logits0)
        empty_term = (start - float(_score(empty, target, metric.score)[0])) / (n + 1)
    found = []
    for sign in (-1.0, 1.0):  # -1: the worst ordering (min), +1: the best (max)
        beam = [(empty_term, np.zeros(n, bool))]
        for _ in range(n):
            candidates = [(total, chosen, i) for total, chosen in beam for i in np.flatnonzero(~chosen)]
            prefixes = np.array([chosen | (np.arange(n) == i) for _, chosen, i in candidates])
            keep = ~prefixes if metric.mode == "remove" else prefixes
            scores = _score(score_rows(classifier, encoding, keep, operator, filler_options, logits0), target,
                            metric.score)
            totals = np.array([c[0] for c in candidates]) + (start - scores) / (n + 1)
            best = np.argsort(-sign * totals, kind="stable")
            seen, beam = set(), []
            for j in best:  # distinct prefix sets only: two orders of the same set have the same future
                key = prefixes[j].tobytes()
                if key in seen:
                    continue
                seen.add(key)
                beam.append((float(totals[j]), prefixes[j]))
                if len(beam) == width:
                    break
        found.append(beam[0][0])
    return found[0], found[1]


@dataclass
class Bounds:
    search: str
    values: dict[str, tuple[float, float]]  # metric id -> (min, max) AOPC


_cache: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def aopc_bounds(classifier, encoding, removal: RemovalOptions, naopc: NaopcOptions, target: int,
                filler_options: dict | None = None, metrics=METRICS) -> Bounds:
    """The bounds of every metric for one input, memoized per classifier (methods and the random baseline
    of one input share them)."""
    key = (encoding.key, target, tuple(effective_operator(m, removal) for m in metrics), naopc.naopc_exact_words,
           naopc.naopc_beam, tuple(m.id for m in metrics))
    with _lock:
        per_model = _cache.setdefault(classifier, OrderedDict())
        if key in per_model:
            return per_model[key]
    logits0 = base_logits(classifier, encoding)
    if encoding.n_words <= naopc.naopc_exact_words:
        bounds = Bounds(EXACT, exact_bounds(classifier, encoding, metrics, removal, target, logits0, filler_options))
    else:
        bounds = Bounds(BEAM, {m.id: beam_bounds(classifier, encoding, m, removal, target, logits0, filler_options,
                                                 naopc.naopc_beam) for m in metrics})
    with _lock:
        per_model[key] = bounds
        while len(per_model) > 256:
            per_model.popitem(last=False)
    return bounds


def normalize(aopc: float, low: float, high: float) -> float:
    """(AOPC - min) / (max - min); NaN when every ordering gives the same AOPC (nothing to rank)."""
    if not high > low:
        return float("nan")
    return float((aopc - low) / (high - low))


# ----- the evaluator ------------------------------------------------------------------------------------
def _normalized(results, bounds: Bounds, metrics) -> list[MetricValues]:
    out = []
    for result in results:
        values, details = {}, {}
        for metric in metrics:
            aopc = result.values[metric.id]
            low, high = bounds.values[metric.id]
            if bounds.search == BEAM:  # a beam bound is not guaranteed: the ordering itself is a valid bound
                low, high = min(low, aopc), max(high, aopc)
            values[metric.id] = normalize(aopc, low, high)
            details[metric.id] = {"aopc": aopc, "aopc_min": low, "aopc_max": high, "search": bounds.search,
                                  "reference": REFERENCE}
        out.append(MetricValues(values, details=details))  # the curves are the raw AOPC's: not repeated
    return out


def score_orders(classifier, encoding, orders: np.ndarray, options: dict, example=None, explanation=None,
                 metrics=METRICS) -> tuple[list[MetricValues], Bounds]:
    """NAOPC of each ordering (rows of ``orders``) of one input, with the bounds they share."""
    removal = RemovalOptions.from_dict(options)
    naopc = options_from(NaopcOptions, options)
    logits0 = base_logits(classifier, encoding)
    target = target_class(removal, logits0, example, explanation)
    bounds = aopc_bounds(classifier, encoding, removal, naopc, target, options, metrics)
    results = evaluate_orders(classifier, encoding, list(metrics), orders, removal, example, explanation, options)
    return _normalized(results, bounds, metrics), bounds


PRESETS = (
    PinnedPreset("naopc", COMPREHENSIVENESS.preset_label, "naopc_exact_words", None),
    PinnedPreset("naopc-exact-10", "NAOPC with exact bounds up to 10 words (the default before issue 18; slower on "
                "9-10 words, exact where the default uses the beam)", "naopc_exact_words", 10, "exact-10"),
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


def _search(exact_words: int | None) -> str:
    if exact_words is None:
        return ("exact bounds up to naopc_exact_words words (default 8), beam search (naopc_beam, default 5) "
                "above; the search used is in each value's details")
    return f"exact bounds up to {exact_words} words, beam search (naopc_beam, default 5) above"


def _records(preset: PinnedPreset) -> tuple:
    records = []
    for metric in METRICS:
        record = metric_record(metric)
        record = replace(record, params={**record.params, "bounds": _search(preset.value)})
        if preset.suffix:
            record = replace(record, id=f"{record.id}[{preset.suffix}]", preset=preset.id,
                             label=f"{record.label} (exact up to {preset.value} words)")
        records.append(record)
    return tuple(records)


SEARCH = _search(None)
EVALUATORS_BY_PRESET = {preset.id: register_evaluator(Evaluator(
    id=preset.id, label=preset.label, metrics=_records(preset), compute=compute_for(preset), batch=naopc_batch))
    for preset in PRESETS}
EVALUATOR = EVALUATORS_BY_PRESET["naopc"]
