"""Removal curves: rank the words, build every keep mask of a curve, and score them in one batched pass.

All removal-based faithfulness metrics (comprehensiveness, sufficiency, AOPC, deletion / insertion AUC,
DeletionBERT, log-odds, decision flip) are one ``RemovalMetric`` each: which words a point removes
(the top of the ranking, or everything but the top), how many per point, which score of the target class
is read, and how the points are summarised. The paper presets are in ``evaluation/faithfulness/presets.py``.

Every removal goes through the one perturbation engine (``models.perturb``), so the removal operator is an
explicit, displayed option and a metric and a method that remove words the same way can be detected
(paper 000 section 4; ``faithfulness_bias.py``).

Unit: whitespace words (the project's one unit, ``corpora.records``); special tokens are never removed by
the engine. Papers 003 and 004 count sub-word tokens *including* [CLS]/[SEP] when they turn a fraction
into a count: with ``exclude_special=False`` the special tokens are added to the count's denominator
(they are still never removed).

Speed: ``evaluate_orders`` scores any number of rankings (a method's, or the random baseline's orderings)
for any number of metrics that share an operator in one engine call (one padded forward batch per
``max_batch_tokens``).
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import asdict, dataclass, field

import numpy as np

from evaluation import targets
from evaluation.faithfulness.curve_points import Curve, round_count, steps_limit
from evaluation.faithfulness.mlm_filler import load_filler
from evaluation.faithfulness.token_sequences import classify_sequences, distinct_sequences
from evaluation.metric import contrast_option, target_option
from explainers.params import options_from, param, validate
from explainers.scores import softmax
from explainers.shared_passes import known_without_each_word
from models import Encoding, Operator, TextClassifier
from models.perturb import perturb, perturbed_logits
from models.windows import is_document

RANK_BY = ("signed", "absolute")
AOPC_DIVISORS = ("bins+1", "bins")
OPERATOR_IDS = tuple(op.value for op in Operator)


# ----- options shared by every metric -------------------------------------------------------------------
@dataclass(frozen=True)
class RemovalOptions:
    """Options every removal metric takes (the Faithfulness page and ``cli.py evaluate`` expose each of them)."""

    operator: str | None = param(None, "Removal operator", "how a removed word is removed; not set = each "
                                 "preset's own operator", choices=OPERATOR_IDS, type=str)
    target: str | int = target_option()  # predicted (papers 000, 003, 004, ERASER), gold (paper 002), or a class
    contrast: str | int | None = contrast_option()  # read s(target) - s(contrast) after removal (a contrastive target)
    exclude_special: bool = param(True, "Words only in fractions", "true: fractions count words only; false: "
                                  "[CLS]/[SEP] count too (papers 003/004; they are never removed)")
    seed: int = param(0, "Tie-break seed", "seed of the tie-breaking among equal scores (paper 002's code adds "
                      "N(0, 1e-5) noise, seed 0)", min=0)
    rank_by: str = param("signed", "Rank by", "signed: most positive first (papers 000, 003, 004); absolute: "
                         "largest |score| first (paper 001)", choices=RANK_BY)
    aopc_divisor: str | None = param(None, "AOPC divisor", "not set = the preset's; bins+1 (ERASER / paper 004 "
                                     "code) or bins (paper 004 text)", choices=AOPC_DIVISORS, type=str)

    def __post_init__(self):
        object.__setattr__(self, "target", targets.parse(self.target))  # "Gold" -> "gold", "1" -> 1
        object.__setattr__(self, "contrast", targets.parse_contrast(self.contrast))
        validate(self)

    def to_dict(self) -> dict:
        return asdict(self)


# ----- ranking ------------------------------------------------------------------------------------------
def rank_words(scores, seed: int = 0, rank_by: str = "signed") -> np.ndarray:
    """Word indices from most to least important; ties broken by a seeded random order.

    Signed ranking puts the most positive score first (papers 000, 003, 004 rank signed values); NaNs go last.
    """
    scores = np.asarray(scores, dtype=np.float64)
    key = np.abs(scores) if rank_by == "absolute" else scores
    key = np.where(np.isnan(key), -np.inf, key)
    tie = np.random.default_rng(seed).permutation(len(key))
    return np.lexsort((tie, -key))


def random_orders(n_words: int, count: int, seed: int) -> np.ndarray:
    """``count`` random orderings of the words (rows), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    return np.stack([rng.permutation(n_words) for _ in range(count)]) if count else np.zeros((0, n_words), int)


# ----- metric definitions -------------------------------------------------------------------------------
@dataclass(frozen=True)
class RemovalMetric:
    """One removal-based metric. ``points`` turns a word count into the curve's points.

    mode:      "remove" = each point removes the top-c words; "keep" = each point keeps only the top-c words
    schedule:  "fractions" (c = rounding(f * n) for f in ``fractions``) or "steps" (c = 1, 2, ... one word at a time)
    complement: fractions name the *bottom* share removed (paper 003's sufficiency): kept c = n - rounding(f * n);
               with steps, the bottom 1, 2, ... words are removed (kept c = n - 1, n - 2, ...; ROAD LeRF on a grid of
               steps)
    value:     "delta" = s(x) - s(x'), "level" = s(x'), "change" = s(x') - s(x); s = ``score`` of the target
    summary:   "mean" | "aopc" (sum / (bins + 1) or mean, see ``aopc_divisor``) | "auc" (trapezoid) | "point" |
               "flip" (fraction of words removed when the predicted class first changes)
    empty:     "zero": a keep-point that keeps no word counts 0 (paper 004 code); "evaluate": score the input
    positive_only: a point removes / keeps at most the words scored > 0 (ferret's only_pos)
    distinct_points: points that remove / keep no word or the same words as the point before are dropped, and
               ``no_points_value`` is the value when none is left (ferret's AOPC)
    """

    id: str
    label: str
    preset: str
    preset_label: str
    higher_is_better: bool
    range: tuple[float | None, float | None]
    description: str
    reference: str
    operator: str
    mode: str = "remove"
    schedule: str = "fractions"
    fractions: tuple[float, ...] = ()
    rounding: str = "floor"
    complement: bool = False
    max_fraction: float = 1.0
    include_start: bool = False
    min_steps: int = 1
    score: str = "probability"
    value: str = "delta"
    absolute: bool = False
    summary: str = "mean"
    aopc_divisor: str = "bins+1"
    empty: str = "evaluate"
    paper_target: str = "predicted"
    curve: str = ""  # name of the curve this metric summarises (metrics of one curve share it)
    convention: str = ""  # the source's convention where sources differ (sign, AOPC divisor, empty bin), in words
    cost: str = ""  # what a value costs against the measure it refines, in words (docs/benchmarks.md)
    positive_only: bool = False
    distinct_points: bool = False
    no_points_value: float = float("nan")

    def points(self, n_words: int, n_units: int) -> tuple[np.ndarray, np.ndarray]:
        """(counts, x): the number of top words removed (mode remove) or kept (mode keep) per point, and the
        x of each point: the nominal fraction removed / kept (fraction schedules) or count / n_units (steps)."""
        if self.schedule == "fractions":
            counts, xs = [], []
            for f in self.fractions:
                c = round_count(f * n_units, self.rounding)
                if self.complement:
                    c = n_words - min(n_words, c)
                    xs.append(1.0 - f)
                else:
                    xs.append(f)
                counts.append(min(max(c, 0), n_words))
            return np.asarray(counts, dtype=int), np.asarray(xs, dtype=np.float64)
        last = steps_limit(self, n_words, n_units)
        steps = np.arange(0 if self.include_start else 1, last + 1)
        if self.complement:  # the bottom 1, 2, ... words removed one at a time: keep the top n - 1, n - 2, ...
            return n_words - steps, steps / max(n_units, 1)
        return steps, steps / max(n_units, 1)

    def points_for(self, n_words: int, n_units: int, n_positive: int | None) -> tuple[np.ndarray, np.ndarray]:
        """``points`` for one ranking whose scores have ``n_positive`` words > 0 (None: not known, e.g. a random
        ordering), with ``positive_only`` and ``distinct_points`` applied."""
        counts, x = self.points(n_words, n_units)
        if self.positive_only and n_positive is not None:
            counts = np.minimum(counts, n_positive)
        if self.distinct_points:
            chosen = [i for i, c in enumerate(counts) if c > 0 and (i == 0 or c not in counts[:i])]
            counts, x = counts[chosen], x[chosen]
        return counts, x


# ----- results ------------------------------------------------------------------------------------------
@dataclass
class OrderResult:
    """Values and curves of every metric for one ranking."""

    values: dict[str, float] = field(default_factory=dict)
    curves: dict[str, Curve] = field(default_factory=dict)


# ----- the batched evaluation ---------------------------------------------------------------------------
def filler_for(operator: str, options: dict | None):
    """The filler to pass to the engine: the one in ``options['filler']`` (tests, callers that hold one) or
    the prepared masked LM; None for every operator but mlm."""
    if operator != Operator.MLM.value:
        return None
    supplied = (options or {}).get("filler")
    return supplied if supplied is not None else load_filler()


_base_cache: weakref.WeakKeyDictionary[TextClassifier, OrderedDict] = weakref.WeakKeyDictionary()
_base_lock = threading.Lock()


def base_logits(classifier: TextClassifier, encoding: Encoding) -> np.ndarray:
    """Logits of the unperturbed input, memoized per classifier object and input (one forward per example)."""
    with _base_lock:
        per_model = _base_cache.setdefault(classifier, OrderedDict())
        if encoding.key in per_model:
            per_model.move_to_end(encoding.key)
            return per_model[encoding.key]
    logits = classifier.logits_of(encoding)
    with _base_lock:
        per_model[encoding.key] = logits
        while len(per_model) > 256:
            per_model.popitem(last=False)
    return logits


def target_class(options: RemovalOptions, logits: np.ndarray, example=None, explanation=None,
                 contrast_ok: bool = False) -> int:
    """The class whose score the metric reads (the one policy, ``evaluation/targets.py``). An explanation of
    another class is refused: its ranking would be scored against a class it does not explain. A metric that does
    not read a contrast (``contrast_ok`` False) refuses a run with one rather than measure another quantity."""
    target = targets.resolve(options.target, logits, getattr(example, "label", None))
    if explanation is not None and int(explanation.target) != target:
        raise ValueError(f"The explanation explains class {explanation.target} but the metric would read class "
                         f"{target} (target {options.target!r}): explain and measure the same class.")
    if options.contrast is not None and not contrast_ok:
        raise ValueError("This metric reads one class, not a contrast: run it without a contrast class (--contrast, "
                         "the sidebar's 'Rather than'); the removal curves (eraser, deletion, insertion, ...) read "
                         "s(target) - s(contrast).")
    return target


def contrast_class(options: RemovalOptions, logits: np.ndarray, target: int, explanation=None) -> int | None:
    """The contrast class the metric reads beside ``target`` (None without one). An explanation made against
    another contrast (or none) is refused, as one of another target is."""
    foil = targets.resolve_contrast(options.contrast, logits, target)
    if explanation is not None:
        explained = (explanation.provenance.get("target") or {}).get("contrast")
        explained = None if explained is None else int(explained["index"])
        no_class = "contrast_note" in (explanation.provenance.get("target") or {})  # attention, random: any contrast
        if explained != foil and not no_class:
            raise ValueError(f"The explanation is {'against class ' + str(explained) if explained is not None else 'not contrastive'} "
                             f"but the metric would read {'class ' + str(foil) if foil is not None else 'no contrast'}: "
                             f"explain and measure with the same --contrast.")
    return foil


def n_units(encoding: Encoding, options: RemovalOptions) -> int:
    """The denominator that fractions are taken of: words, or words + special tokens."""
    return encoding.n_words + (0 if options.exclude_special else sum(encoding.special))


def keep_rows(order: np.ndarray, counts: np.ndarray, mode: str) -> np.ndarray:
    """(len(counts), n_words) keep masks: remove the top-c words, or keep only the top-c words."""
    n = len(order)
    rank_of = np.empty(n, dtype=int)
    rank_of[order] = np.arange(n)
    in_top = rank_of[None, :] < np.asarray(counts)[:, None]
    return ~in_top if mode == "remove" else in_top


def _score(logits: np.ndarray, target: int, kind: str, foil: int | None = None) -> np.ndarray:
    """The target's ``kind`` score of each row; with a contrast class, the target's minus the foil's
    (probability: p(A) - p(B) after removal; log-probability: log p(A) - log p(B) = z_A - z_B)."""
    if foil is not None:
        return _score(logits, target, kind) - _score(logits, foil, kind)
    probabilities = softmax(logits)[:, target]
    if kind == "probability":
        return probabilities
    if kind == "log-probability":
        logits = np.atleast_2d(logits)
        top = logits.max(axis=1)
        return logits[:, target] - top - np.log(np.exp(logits - top[:, None]).sum(axis=1))
    raise ValueError(f"unknown score {kind!r}")


def effective_operator(metric: RemovalMetric, options: RemovalOptions) -> str:
    return options.operator or metric.operator


def summarize_points(metric: RemovalMetric, counts: np.ndarray, x: np.ndarray, scores: np.ndarray, start: float,
                     predicted_changed: np.ndarray | None, n_unit: int, options: RemovalOptions) -> float:
    """The metric's number from its curve (exposed so tests can check each formula on its own)."""
    if metric.summary == "flip":
        flipped = np.flatnonzero(predicted_changed) if predicted_changed is not None else np.array([], int)
        return float(counts[flipped[0]] / n_unit) if flipped.size else 1.0
    if metric.value == "delta":
        values = start - scores
    elif metric.value == "change":
        values = scores - start
    else:
        values = scores.copy()
    if metric.absolute:
        values = np.abs(values)
    if metric.empty == "zero" and metric.mode == "keep":
        values = np.where(counts == 0, 0.0, values)
    if metric.summary == "mean" or metric.summary == "point":
        return float(values.mean())
    if metric.summary == "aopc":
        divisor = options.aopc_divisor or metric.aopc_divisor
        return float(values.sum() / (len(values) + 1 if divisor == "bins+1" else len(values)))
    if metric.summary == "auc":
        if len(values) == 1:
            return float(values[0])
        # paper 000 (code): x_j = j / K over the curve's own points, sklearn.metrics.auc = trapezoid
        grid = np.linspace(0.0, 1.0, len(values)) if metric.include_start else \
            np.arange(1, len(values) + 1) / len(values)
        return float(np.trapezoid(values, grid))
    raise ValueError(f"unknown summary {metric.summary!r}")


@dataclass(frozen=True)
class InputRows:
    """One input's keep rows for ``score_many``: ``logits0`` its clean logits; rows in ``skip`` are not run."""

    encoding: Encoding
    keep: np.ndarray
    logits0: np.ndarray
    skip: np.ndarray | None = None


def score_rows(classifier: TextClassifier, encoding: Encoding, keep: np.ndarray, operator: str,
               filler_options: dict | None, logits0: np.ndarray, skip: np.ndarray | None = None) -> np.ndarray:
    """Logits of every keep row of one input through the engine, in one call (``score_many`` of one input).

    Rows that keep every word are the unperturbed input (``logits0``); rows in ``skip`` (points whose value a
    preset fixes, e.g. an empty sufficiency bin) are not run and get ``logits0`` too.
    """
    return score_many(classifier, [InputRows(encoding, keep, logits0, skip)], operator, filler_options)[0]


def score_many(classifier: TextClassifier, inputs: list[InputRows], operator: str, filler_options: dict | None,
               max_rows: int | None = None) -> list[np.ndarray]:
    """Logits of the keep rows of several inputs (one array per input), their perturbed rows in shared batches.

    Per input each distinct keep row is computed once; a row without one word is leave-one-out's row where a method
    ran it in this ``sharing()`` block; a document's rows go through ``perturbed_logits`` (only the windows a row
    changes run again). The other rows' distinct token sequences of every input are classified together
    (``token_sequences``: at most ``max_rows`` per call, None: one call). NAOPC's lockstep search scores a step of a
    window's inputs in one call this way.
    """
    outs, pending = [], []  # pending: (out, rows to fill, distinct row of each, logits of the distinct rows)
    keys: list[tuple] = []
    owners: list[tuple[np.ndarray, np.ndarray]] = []  # key j: the logits and distinct rows (of one input) it gives
    filler, loaded = None, False
    for part in inputs:
        encoding, keep, logits0 = part.encoding, part.keep, part.logits0
        outs.append(np.tile(logits0, (len(keep), 1)) if len(keep) else np.zeros((0, len(logits0))))
        todo = ~keep.all(axis=1)
        if part.skip is not None:
            todo &= ~part.skip
        if not todo.any():
            continue
        if not loaded:  # the masked LM only when a row is run
            filler, loaded = filler_for(operator, filler_options), True
        unique, inverse = np.unique(np.packbits(keep[todo], axis=1), axis=0, return_inverse=True)
        rows = np.unpackbits(unique, axis=1, count=encoding.n_words).astype(bool)
        scored = np.zeros((len(rows), len(logits0)))
        pending.append((outs[-1], todo, np.asarray(inverse).reshape(-1), scored))
        run = np.ones(len(rows), dtype=bool)
        known = known_without_each_word(classifier, encoding, operator) if filler is None else None
        if known is not None:
            one_out = np.flatnonzero(rows.sum(axis=1) == encoding.n_words - 1)
            scored[one_out] = known[np.argmin(rows[one_out], axis=1)]
            run[one_out] = False
        if run.any() and is_document(encoding):
            scored[run] = perturbed_logits(classifier, encoding, rows[run], operator, filler)
        elif run.any():
            which = np.flatnonzero(run)
            distinct, unchanged = distinct_sequences(encoding, perturb(classifier, encoding, rows[run], operator,
                                                                       filler))
            scored[which[unchanged]] = logits0
            keys += distinct
            owners += [(scored, which[same]) for same in distinct.values()]
    for (scored, same), logits in zip(owners, classify_sequences(classifier, keys, max_rows)):
        scored[same] = logits
    for out, todo, inverse, scored in pending:
        out[todo] = scored[inverse]
    return outs


def evaluate_orders(classifier: TextClassifier, encoding: Encoding, metrics: list[RemovalMetric],
                    orders: np.ndarray, options: RemovalOptions | dict | None = None, example=None,
                    explanation=None, filler_options: dict | None = None,
                    positives: list[int | None] | None = None, prescored=None) -> list[OrderResult]:
    """Every metric for every ranking (rows of ``orders``); one engine call per removal operator.

    All keep masks of all curves of all rankings that share an operator are built first and scored together
    (``score_rows``: one ``perturb`` call, each distinct input once, run in length bands). ``positives``: words scored > 0 per ranking, None
    where unknown (random orderings), for ``positive_only``. ``prescored(group, keep, forced) -> (logits, found)``:
    rows already scored elsewhere (NAOPC's bound searches), which the engine does not run again.
    """
    if not isinstance(options, RemovalOptions):
        options = options_from(RemovalOptions, options)
    orders = np.atleast_2d(np.asarray(orders, dtype=int))
    if orders.shape[1] != encoding.n_words:
        raise ValueError(f"orderings have {orders.shape[1]} words; the input has {encoding.n_words}")
    logits0 = base_logits(classifier, encoding)
    target = target_class(options, logits0, example, explanation, contrast_ok=True)
    foil = contrast_class(options, logits0, target, explanation)
    predicted = int(np.argmax(logits0))
    units = n_units(encoding, options)
    results = [OrderResult() for _ in range(len(orders))]
    by_operator: dict[str, list[RemovalMetric]] = {}
    for metric in metrics:
        by_operator.setdefault(effective_operator(metric, options), []).append(metric)
    for operator, group in by_operator.items():
        blocks, layout = [], []
        for metric in group:
            for index, order in enumerate(orders):
                counts, x = metric.points_for(encoding.n_words, units, None if positives is None else positives[index])
                blocks.append(keep_rows(order, counts, metric.mode))
                layout.append((metric, index, counts, x))
        keep = np.concatenate(blocks) if blocks else np.zeros((0, encoding.n_words), dtype=bool)
        forced = np.concatenate([np.full(len(c), m.mode == "keep" and m.empty == "zero") & (c == 0)
                                 for m, _, c, _ in layout]) if layout else np.zeros(0, bool)
        if prescored is None:
            logits = score_rows(classifier, encoding, keep, operator, filler_options, logits0, skip=forced)
        else:
            logits, found = prescored(group, keep, forced)
            logits[~found] = score_rows(classifier, encoding, keep[~found], operator, filler_options, logits0,
                                        skip=forced[~found])
        offset = 0
        for metric, index, counts, x in layout:
            part = logits[offset:offset + len(counts)]
            offset += len(counts)
            start = float(_score(logits0[None, :], target, metric.score, foil)[0])
            scores = _score(part, target, metric.score, foil) if len(part) else np.zeros(0)
            changed = part.argmax(axis=1) != predicted if len(part) else np.zeros(0, bool)
            value = summarize_points(metric, counts, x, scores, start, changed, units, options) if len(counts) \
                else metric.no_points_value
            results[index].values[metric.id] = value
            results[index].curves[metric.id] = Curve(metric.id, [float(v) for v in x], [int(c) for c in counts],
                                                     [float(s) for s in scores], start, metric.mode, metric.score)
    return results


def evaluate_scores(classifier: TextClassifier, encoding: Encoding, metrics: list[RemovalMetric], scores,
                    options: RemovalOptions | dict | None = None, example=None, explanation=None,
                    filler_options: dict | None = None) -> OrderResult:
    """Every metric for one explanation's word scores (ranked with the options' seeded tie-breaking)."""
    if not isinstance(options, RemovalOptions):
        options = options_from(RemovalOptions, options)
    order = rank_words(scores, options.seed, options.rank_by)
    positive = int(np.sum(np.asarray(scores, dtype=np.float64) > 0))
    return evaluate_orders(classifier, encoding, metrics, order[None, :], options, example, explanation,
                           filler_options, positives=[positive])[0]
