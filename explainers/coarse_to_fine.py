"""Coarse to fine: rank the sentences, then explain words only inside the top sentences, under a budget.

1. The coarse pass: the method with sentences as its players (``models.granularity.by_units``), one score per
   sentence.
2. The fine pass: sentences are chosen by a rule (``explainers/coarse_rules.py``: an order, by score, score per
   word or score / sqrt(words), and a limit, top-k sentences, a word budget or a share of the word-level cost, and
   an optional second round); the same method then runs with each chosen word as its own player and each run of
   other words between them as one player (kept as a block, scored but not reported). Words outside the chosen
   sentences get no word score (0, and ``explained`` False). A second round runs the fine pass again on the
   sentences it adds (for leave-one-out the scores are those one pass would give; for sampling methods each round
   has its own players).

The cost saved is stated against the method's word-level forward passes (measured when ``compare`` runs it, else
its own estimate), and with ``compare`` the agreement with the full word-level result: precision of the top-10
words and Spearman's rank correlation over the words explained. With no limit (every sentence chosen) every word
is its own player and the result is the word-level one (tested).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from explainers.coarse_rules import (  # noqa: F401
    DEFAULT_RULE,
    RULES,
    TOP_WORDS,
    SentenceRule,
    choose,
    ranked,
    rows_per_word,
    rule_of,
    second_round,
)
from models import Encoding, InputError, metered
from models.granularity import by_units

_RULE_LIMITS = object()  # top_k / budget_words not given: the rule's own limits


@dataclass
class CoarseToFine:
    word_scores: np.ndarray  # every word of the input; 0 outside the chosen sentences
    explained: np.ndarray  # bool per word: inside a chosen sentence
    sentences: tuple[range, ...]
    sentence_scores: np.ndarray
    chosen: list[int]  # sentence indices, in rank order (a second round's after the first's)
    forward_passes: int
    seconds: float
    word_level_passes: int
    word_level_measured: bool
    agreement: dict = field(default_factory=dict)
    rule: str = DEFAULT_RULE
    word_level_scores: np.ndarray | None = None  # the whole input's word scores, when compared

    @property
    def cost_share(self) -> float:
        """Forward passes of coarse + fine as a share of the word-level method's."""
        return self.forward_passes / max(1, self.word_level_passes)

    def summary(self) -> dict:
        return {"rule": self.rule, "sentences": len(self.sentences), "chosen": self.chosen,
                "words_explained": int(self.explained.sum()), "forward_passes": self.forward_passes,
                "word_level_passes": self.word_level_passes,
                "word_level_passes_from": "measured" if self.word_level_measured else "the method's estimate",
                "cost_share": round(self.cost_share, 4), "seconds": round(self.seconds, 3), **self.agreement}


def _ranked(scores: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def top_precision(scores: np.ndarray, reference: np.ndarray, k: int = TOP_WORDS) -> float:
    """|top-k of scores & top-k of reference| / k (k at most the number of words)."""
    k = min(k, len(reference))
    return len(set(_ranked(scores)[:k]) & set(_ranked(reference)[:k])) / max(1, k)


def fine_pass(explainer, classifier, encoding: Encoding, target: int, words: np.ndarray) -> np.ndarray:
    """The method with each of ``words`` as its own player (the runs of other words as blocks): their scores."""
    singles = [(int(w), int(w) + 1) for w in words]
    units = by_units(encoding, "span", spans=singles, span_unit="word")
    scores = explainer.explain(classifier, units, target).word_scores
    out = np.zeros(encoding.n_words)
    for unit, (group, kind) in enumerate(zip(units.groups, units.kinds)):
        if kind == "span":
            out[group.start] = scores[unit]
    return out


def coarse_to_fine(explainer, classifier, encoding: Encoding, target: int | None = None,
                   rule: str | SentenceRule = DEFAULT_RULE, compare: bool = False,
                   top_k=_RULE_LIMITS, budget_words=_RULE_LIMITS) -> CoarseToFine:
    """The method ``explainer`` (a removal method) coarse to fine on ``encoding``; see the module docstring.
    ``top_k`` / ``budget_words`` given: the rule's order with exactly these limits (None = no limit)."""
    from scipy.stats import spearmanr  # lazy: scipy.stats costs ~0.8 s at import
    if explainer.family not in ("perturbation", "mlm"):
        raise InputError(f"Coarse to fine needs a method that removes words (leave-one-out, occlusion, Shapley "
                         f"sampling, LIME, KernelSHAP, partition SHAP); '{explainer.label}' scores words otherwise.")
    name = rule if isinstance(rule, str) else "custom"
    rule = rule_of(rule)
    if top_k is not _RULE_LIMITS or budget_words is not _RULE_LIMITS:
        rule = rule.limited(None if top_k is _RULE_LIMITS else top_k,
                            None if budget_words is _RULE_LIMITS else budget_words)
        name = f"{name} (top_k {rule.top_k}, budget_words {rule.budget_words})"
    if target is None:
        target = int(np.argmax(classifier.logits_of(encoding)))
    started = time.perf_counter()
    with metered() as meter:
        sentences = by_units(encoding, "sentence")
        groups = sentences.groups
        coarse = explainer.explain(classifier, sentences, target).word_scores
        word_rows = rows_per_word(encoding)  # a budget share counts window rows
        chosen = choose(rule, coarse, groups, encoding.n_words, word_rows)
        explained = _words_of(chosen, groups, encoding.n_words)
        word_scores = fine_pass(explainer, classifier, encoding, target, np.flatnonzero(explained))
        more = second_round(rule, coarse, groups, encoding.n_words, chosen, word_scores[explained], word_rows)
        if more:
            added = _words_of(more, groups, encoding.n_words)
            word_scores[added] = fine_pass(explainer, classifier, encoding, target, np.flatnonzero(added))[added]
            chosen, explained = chosen + more, explained | added
    result = CoarseToFine(word_scores, explained, groups, coarse, chosen, meter.forward_passes,
                          time.perf_counter() - started, explainer.estimate_passes(encoding)[0], False, rule=name)
    if compare:
        with metered() as full_meter:
            full = explainer.explain(classifier, encoding, target).word_scores
        result.word_level_passes, result.word_level_measured = full_meter.forward_passes, True
        inside = np.flatnonzero(explained)
        result.agreement = {
            f"top{TOP_WORDS}_precision": top_precision(np.where(explained, word_scores, -np.inf), full),
            "spearman_inside": float(spearmanr(word_scores[inside], full[inside])[0]) if inside.size > 2 else None}
        result.word_level_scores = full
    return result


def _words_of(chosen: list[int], groups, n_words: int) -> np.ndarray:
    explained = np.zeros(n_words, dtype=bool)
    for index in chosen:
        explained[groups[index].start:groups[index].stop] = True
    return explained
