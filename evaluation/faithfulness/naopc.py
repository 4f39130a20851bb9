"""NAOPC: AOPC rescaled per example between the worst and the best ordering of the words (Edin et al., ACL 2025,
arXiv 2408.08137, "Normalized AOPC: Fixing Misleading Faithfulness Metrics for Feature Attribution Explainability").

AOPC depends on the model and the input as much as on the explanation, so raw values do not compare across models
(or a model and its randomized copy). NAOPC = (AOPC - AOPC_min) / (AOPC_max - AOPC_min), where the bounds are the
AOPC of the worst and the best of all n! orderings of the words under the same curve and removal operator.

Curves (Edin et al. s. 3, one word per step, K = n):
- comprehensiveness: AOPC = 1/(n+1) sum_{k=0..n} [p(x) - p(x without its top-k words)] (the k = 0 term is 0);
- sufficiency: AOPC = 1/(n+1) sum_{k=0..n} [p(x) - p(only the top-(n-k) words)], the least important removed
  first. NAOPC keeps each AOPC's direction: comprehensiveness higher is better, sufficiency lower.

The bounds, their search, memo and presets' widths are in ``naopc_bounds.py``; a dataset run's window searches its
inputs' bounds in lockstep (``naopc_lockstep.py``) through the evaluator's ``window_hook``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from evaluation import targets
from evaluation.baselines import orderings_seed
from evaluation.batch import Window
from evaluation.faithfulness.curves import (
    RemovalOptions,
    base_logits,
    contrast_class,
    evaluate_orders,
    random_orders,
    rank_words,
    target_class,
)
from evaluation.faithfulness.naopc_bounds import (
    COMPREHENSIVENESS,
    EXACT,
    METRICS,
    REFERENCE,
    Bounds,
    NaopcOptions,
    aopc_bounds,
    chain_sums,
    divisor,
    widen,
)
from evaluation.faithfulness.naopc_lockstep import prefill_bounds
from evaluation.faithfulness.pinned_preset import PinnedPreset
from evaluation.faithfulness.presets import metric_record
from evaluation.metric import BatchResult, Evaluator, MetricValues, RunOptions, register_evaluator
from explainers.params import options_from
from models.windows import is_document


def normalize(aopc: float, low: float, high: float) -> float:
    """(AOPC - min) / (max - min); NaN when every ordering gives the same AOPC (nothing to rank)."""
    if not high > low:
        return float("nan")
    return float((aopc - low) / (high - low))


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
    out: list[dict[str, float]] = [{} for _ in range(len(orders))]
    for metric in metrics:
        terms = bounds.searches[bounds.keys[metric.id]].terms
        sums = chain_sums(terms, orders if metric.mode == "remove" else orders[:, ::-1])
        for row, total in zip(out, sums):
            row[metric.id] = float(total / divisor(metric, removal, n))
    return out


def _beam_aopcs(classifier, encoding, bounds: Bounds, metrics, orders: np.ndarray, removal: RemovalOptions,
                example, explanation, filler_options) -> list[dict[str, float]]:
    """Each ordering's AOPCs as ``evaluate_orders`` computes them, with the curve points the beam search already
    scored taken from its rows: only the others go through the engine (one call per operator, each distinct row
    once)."""
    logits0 = base_logits(classifier, encoding)

    def prescored(group, keep: np.ndarray, forced: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits = np.tile(logits0, (len(keep), 1))
        found = np.zeros(len(keep), bool)
        for metric in group:  # the rows of this operator's searches (one per score; the same rows' logits)
            seen, known = bounds.searches[bounds.keys[metric.id]].rows.lookup(keep)
            fresh = seen & ~found & ~forced
            logits[fresh] = known[fresh[seen]]
            found |= fresh
        return logits, found

    results = evaluate_orders(classifier, encoding, metrics, orders, removal, example, explanation, filler_options,
                              prescored=prescored)
    return [result.values for result in results]


def score_orders(classifier, encoding, orders: np.ndarray, options: dict, example=None, explanation=None,
                 metrics=METRICS) -> tuple[list[MetricValues], Bounds]:
    """NAOPC of each ordering (rows of ``orders``) of one input, with the bounds they share."""
    removal = options_from(RemovalOptions, options)
    naopc = options_from(NaopcOptions, options)
    logits0 = base_logits(classifier, encoding)
    target = target_class(removal, logits0, example, explanation, contrast_ok=True)
    contrast_class(removal, logits0, target, explanation)  # refuses an explanation of another contrast early
    bounds = aopc_bounds(classifier, encoding, removal, naopc, target, options, metrics)
    n = encoding.n_words
    orders = np.atleast_2d(np.asarray(orders, dtype=int))
    if orders.shape[1] != n:  # as evaluate_orders says it on the beam path
        raise ValueError(f"orderings have {orders.shape[1]} words; the input has {n}")
    if bounds.search == EXACT:
        aopcs = _exact_aopcs(bounds, metrics, orders, removal, n)
    else:
        aopcs = _beam_aopcs(classifier, encoding, bounds, metrics, orders, removal, example, explanation, options)
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
        removal = options_from(RemovalOptions, options)
        order = rank_words(explanation.word_scores, removal.seed, removal.rank_by)
        return preset.rename(score_orders(classifier, encoding, order[None, :], options, example, explanation)[0][0])
    return compute


compute = compute_for(BY_ID["naopc"])


def naopc_batch(evaluators, classifier, encoding, example, explanations: dict, options: dict,
                n_random: int) -> BatchResult:
    """Every method and ``n_random`` random orderings of one input against one search for the bounds (per preset:
    presets with the same threshold for this input share the search through ``aopc_bounds``' memo)."""
    result = BatchResult()
    removal = options_from(RemovalOptions, options)
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


def prefill_window(evaluator: Evaluator, window: Window) -> None:
    """The evaluator's per-window hook in a dataset run: the bounds of the window's inputs searched in lockstep (one
    engine call per beam step for all inputs, not one per input and step), left in the memo the cells'
    ``aopc_bounds`` reads. Inputs read in windows (documents) are left to their cells."""
    options = BY_ID[evaluator.id].options(window.options)
    removal = options_from(RemovalOptions, options)
    chosen = [s["index"] for s in window.specs if evaluator.applies_to(window.example(s["index"]))]
    chosen = [i for i in chosen if not is_document(window.encoding(i))]
    encodings = [window.encoding(i) for i in chosen]
    classes = [targets.resolve(removal.target, base_logits(window.classifier, encoding), window.example(i).label)
               for i, encoding in zip(chosen, encodings)]  # the class the cells' metric reads
    prefill_bounds(window.classifier, encodings, classes, removal, options_from(NaopcOptions, options), options)


SEARCH = _search()
EVALUATORS_BY_PRESET = {preset.id: register_evaluator(Evaluator(
    id=preset.id, label=preset.label, metrics=_records(preset), compute=compute_for(preset), batch=naopc_batch,
    options=NaopcOptions, window_hook=prefill_window))
    for preset in PRESETS}
EVALUATOR = EVALUATORS_BY_PRESET["naopc"]
