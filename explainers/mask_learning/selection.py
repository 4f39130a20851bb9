"""The metric an AML map or checkpoint is selected on (paper 004 s. 3.1: "metric-adapted explanations").

pAML keeps the checkpoint and fAML the per-input map that score best on one faithfulness metric. fAML selects
inside an explainer, and explainers may not import ``evaluation``, so the five metrics of paper 004 are
computed here directly through the one perturbation engine (``models.perturb``), with the definitions of
``evaluation/faithfulness/presets.py`` (a test checks both give the same numbers): words are the unit,
k % of n words is floor(k n / 100) words, the ranking is by signed score with a seeded tie-break, the
class read is the explained one (the predicted one for pAML's checkpoints), Comp / Suff delete words and
LO replaces them by [MASK].
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models import Encoding, TextClassifier, TokenBatch, UserFacingError
from models.perturb import perturb

ERASER_BINS = (0.01, 0.05, 0.10, 0.20, 0.50)
# padded tokens per engine call when many inputs share calls on a CPU: 8,192-token batches ran 20 % slower than
# 2,048-token ones on MiniLM (their activations leave the cache; docs/benchmarks.md, mask learning)
CPU_CALL_TOKENS = 2048


@dataclass(frozen=True)
class SelectionMetric:
    id: str  # the id of the same metric in evaluation/faithfulness/presets.py
    name: str  # what `prepare-aml --tune` accepts
    label: str
    higher_is_better: bool
    mode: str  # "remove" the top words or "keep" only them
    fractions: tuple[float, ...]
    operator: str
    value: str  # "delta" p(x) - p(x'), "log-change" log p(x') - log p(x)
    aopc: bool = False  # sum over the bins / (bins + 1) (ERASER / paper 004 code)


METRICS = {m.name: m for m in [
    SelectionMetric("comprehensiveness-004", "comprehensiveness", "Comprehensiveness @20 %", True, "remove", (0.2,),
                    "delete", "delta"),
    SelectionMetric("sufficiency-004", "sufficiency", "Sufficiency @20 %", False, "keep", (0.2,), "delete", "delta"),
    SelectionMetric("log-odds-004", "log-odds", "Log-odds @20 % [MASK]", False, "remove", (0.2,), "mask",
                    "log-change"),
    SelectionMetric("comprehensiveness-eraser", "aopc-comprehensiveness", "Comprehensiveness (AOPC)", True, "remove",
                    ERASER_BINS, "delete", "delta", aopc=True),
    SelectionMetric("sufficiency-eraser", "aopc-sufficiency", "Sufficiency (AOPC)", False, "keep", ERASER_BINS,
                    "delete", "delta", aopc=True),
]}
DEFAULT_METRIC = "aopc-comprehensiveness"  # paper 004 Table 3 selects on AOPC-Comp


def metric_named(name: str) -> SelectionMetric:
    if name in METRICS:
        return METRICS[name]
    by_id = {m.id: m for m in METRICS.values()}
    if name in by_id:
        return by_id[name]
    raise UserFacingError(f"Unknown AML selection metric '{name}'; choose one of {', '.join(METRICS)}.")


def bin_sizes(metric: SelectionMetric, n_words: int) -> list[int]:
    """Words removed (or kept) in each bin: floor(k n / 100) of n words."""
    return [int(np.floor(round(f * n_words, 9))) for f in metric.fractions]


def copies_per_candidate(metric: SelectionMetric, n_words: int) -> int:
    """Perturbed copies one candidate needs at most: its bins that are neither empty nor the whole input."""
    return sum(0 < count < n_words for count in bin_sizes(metric, n_words))


def ranking(scores, seed: int = 0) -> np.ndarray:
    """Word indices by descending score; ties in a seeded random order (evaluation's ``rank_words``)."""
    scores = np.asarray(scores, dtype=np.float64)
    key = np.where(np.isnan(scores), -np.inf, scores)
    tie = np.random.default_rng(seed).permutation(len(key))
    return np.lexsort((tie, -key))


def metric_values(classifier: TextClassifier, encoding: Encoding, candidates: list, metric: SelectionMetric,
                  target: int | None = None, seed: int = 0) -> np.ndarray:
    """The metric of every candidate word-score vector for the explained class (default: the predicted one),
    all perturbed copies in one engine call."""
    return metric_table(classifier, [(encoding, candidates, target)], metric, seed)[0]


def metric_of_inputs(classifier: TextClassifier, encodings: list[Encoding], word_scores: list, metric: SelectionMetric,
                     seed: int = 0) -> np.ndarray:
    """The metric of one word-score vector per input, for each input's predicted class (pAML's validation): the
    perturbed copies of many inputs share engine calls of about ``CPU_CALL_TOKENS`` padded tokens on a CPU."""
    budget = classifier.max_batch_tokens
    if classifier.device.type == "cpu":
        budget = min(budget, CPU_CALL_TOKENS)
    values, part, tokens = [], [], 0
    for i, encoding in enumerate(encodings):
        part.append(i)
        tokens += encoding.n_tokens * len(metric.fractions)
        if tokens >= budget or i == len(encodings) - 1:
            table = metric_table(classifier, [(encodings[j], [word_scores[j]], None) for j in part], metric, seed)
            values += [row[0] for row in table]
            part, tokens = [], 0
    return np.array(values)


def metric_table(classifier: TextClassifier, items: list[tuple[Encoding, list, int | None]], metric: SelectionMetric,
                 seed: int = 0) -> list[np.ndarray]:
    """For each (encoding, candidates, target): the metric of every candidate; one engine call for everything, in
    which an input's identical perturbed copies run once."""
    plans, batches = [], []
    for encoding, candidates, target in items:
        plan = _Plan(classifier, encoding, candidates, metric, target, seed)
        plans.append(plan)
        if len(plan.distinct):
            batches.append(perturb(classifier, encoding, plan.distinct, metric.operator))
    logits = classifier.predict_logits(_concatenated(batches)) if batches else np.zeros((0, classifier.num_labels))
    out, offset = [], 0
    for plan in plans:
        count = len(plan.distinct)
        out.append(plan.values(logits[offset:offset + count][plan.copy_of], metric))
        offset += count
    return out


class _Plan:
    """The perturbed copies one input needs: for every candidate and bin, which words stay."""

    def __init__(self, classifier: TextClassifier, encoding: Encoding, candidates: list, metric: SelectionMetric,
                 target: int | None, seed: int):
        n = encoding.n_words
        self.logits0 = classifier.logits_of(encoding)
        self.target = int(np.argmax(self.logits0)) if target is None else int(target)
        self.n_candidates = len(candidates)
        self.n_bins = len(metric.fractions)
        counts = bin_sizes(metric, n)
        rows, layout = [], []
        for scores in candidates:
            order = ranking(scores, seed)
            rank_of = np.empty(n, dtype=int)
            rank_of[order] = np.arange(n)
            for count in counts:
                top = rank_of < count
                layout.append(count)
                rows.append(~top if metric.mode == "remove" else top)
        self.layout = np.array(layout)
        self.keep = np.array(rows, dtype=bool).reshape(len(rows), n)
        self.run = (self.layout > 0) & ~self.keep.all(axis=1)  # an empty bin is never run; keeping all words is x
        # candidates that rank the same top words share their perturbed copies (fAML's steps often do): each
        # distinct copy runs once, and ``copy_of`` says which distinct copy every run row reads
        self.distinct, copy_of = np.unique(self.keep[self.run], axis=0, return_inverse=True)
        self.copy_of = copy_of.reshape(-1)

    def values(self, run_logits: np.ndarray, metric: SelectionMetric) -> np.ndarray:
        logits = np.tile(self.logits0, (len(self.layout), 1))
        if self.run.any():
            logits[self.run] = run_logits
        log_p = logits - logits.max(axis=1, keepdims=True)
        log_p = log_p - np.log(np.exp(log_p).sum(axis=1, keepdims=True))
        logits0 = self.logits0
        log_p0 = logits0 - logits0.max() - np.log(np.exp(logits0 - logits0.max()).sum())
        if metric.value == "delta":
            values = np.exp(log_p0[self.target]) - np.exp(log_p[:, self.target])
        else:
            values = log_p[:, self.target] - log_p0[self.target]
        values = np.where(self.layout == 0, 0.0, values)  # an empty bin counts 0 (paper 004 code)
        values = values.reshape(self.n_candidates, self.n_bins)
        if metric.aopc:
            return values.sum(axis=1) / (self.n_bins + 1)
        return values.mean(axis=1)


def _concatenated(batches: list[TokenBatch]) -> TokenBatch:
    def joined(field: str):
        parts = [getattr(b, field) for b in batches]
        return None if any(p is None for p in parts) else [row for part in parts for row in part]

    return TokenBatch(input_ids=joined("input_ids"), token_type_ids=joined("token_type_ids"),
                      zero_masks=joined("zero_masks"))


def best_index(values: np.ndarray, metric: SelectionMetric) -> int:
    """The first candidate with the best value (highest or lowest, by the metric's direction)."""
    values = np.asarray(values, dtype=np.float64)
    return int(np.argmax(values) if metric.higher_is_better else np.argmin(values))
