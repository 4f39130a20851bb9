"""Coarse to fine: rank the sentences, then explain words only inside the top sentences, under a budget.

1. The coarse pass: the method with sentences as its players (``models.granularity.by_units``), one score per
   sentence.
2. The fine pass: the sentences in rank order (highest score first; unsigned methods by value as well) are chosen
   until ``top_k`` sentences or ``budget_words`` words are reached; the same method then runs with each chosen
   word as its own player and each run of other words between them as one player (kept as a block, scored but not
   reported). Words outside the chosen sentences get no word score (0, and ``explained`` False).

The cost saved is stated against the method's word-level forward passes (measured when ``compare`` runs it, else
its own estimate), and with ``compare`` the agreement with the full word-level result: precision of the top-10
words and Spearman's rank correlation over the words explained. With no limit (every sentence chosen) every word
is its own player and the result is the word-level one (tested).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy.stats import spearmanr

from models import Encoding, InputError, metered
from models.granularity import by_units

TOP_WORDS = 10  # the agreement's top-k (target: top-10 precision >= 0.8)


@dataclass
class CoarseToFine:
    word_scores: np.ndarray  # every word of the input; 0 outside the chosen sentences
    explained: np.ndarray  # bool per word: inside a chosen sentence
    sentences: tuple[range, ...]
    sentence_scores: np.ndarray
    chosen: list[int]  # sentence indices, in rank order
    forward_passes: int
    seconds: float
    word_level_passes: int
    word_level_measured: bool
    agreement: dict = field(default_factory=dict)
    word_level_scores: np.ndarray | None = None  # the whole input's word scores, when compared

    @property
    def cost_share(self) -> float:
        """Forward passes of coarse + fine as a share of the word-level method's."""
        return self.forward_passes / max(1, self.word_level_passes)

    def summary(self) -> dict:
        return {"sentences": len(self.sentences), "chosen": self.chosen,
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


def coarse_to_fine(explainer, classifier, encoding: Encoding, target: int | None = None, top_k: int | None = 3,
                   budget_words: int | None = None, compare: bool = False) -> CoarseToFine:
    """The method ``explainer`` (a removal method) coarse to fine on ``encoding``; see the module docstring."""
    if explainer.family not in ("perturbation", "mlm"):
        raise InputError(f"Coarse to fine needs a method that removes words (leave-one-out, occlusion, Shapley "
                         f"sampling, LIME, KernelSHAP, partition SHAP); '{explainer.label}' scores words otherwise.")
    if top_k is not None and top_k < 1:
        raise InputError("Choose at least one sentence (top_k >= 1), or no limit.")
    if target is None:
        target = int(np.argmax(classifier.logits_of(encoding)))
    started = time.perf_counter()
    with metered() as meter:
        sentences = by_units(encoding, "sentence")
        coarse = explainer.explain(classifier, sentences, target).word_scores
        chosen, words = [], 0
        for index in _ranked(coarse):
            size = len(sentences.groups[index])
            if (top_k is not None and len(chosen) >= top_k) or \
                    (budget_words is not None and chosen and words + size > budget_words):
                break
            chosen.append(index)
            words += size
        explained = np.zeros(encoding.n_words, dtype=bool)
        for index in chosen:
            group = sentences.groups[index]
            explained[group.start:group.stop] = True
        singles = [(int(w), int(w) + 1) for w in np.flatnonzero(explained)]
        fine_units = by_units(encoding, "span", spans=singles, span_unit="word")
        fine = explainer.explain(classifier, fine_units, target).word_scores
    word_scores = np.zeros(encoding.n_words)
    for unit, (group, kind) in enumerate(zip(fine_units.groups, fine_units.kinds)):
        if kind == "span":
            word_scores[group.start] = fine[unit]
    result = CoarseToFine(word_scores, explained, sentences.groups, coarse, chosen, meter.forward_passes,
                          time.perf_counter() - started, explainer.estimate_passes(encoding)[0], False)
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
