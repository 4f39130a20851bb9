"""Phrase-level Input Marginalization: paper 000 section 7's direction, IM over a run of words instead of one word.

Paper 000 (section 7) suggests IM "might be more useful at the phrase level (Jin et al., 2020) ... as deleting a
set of contiguous words has a larger effect", without a protocol. This is paper 000's IM (Eqs. 3-4, top-k,
weights renormalized [code]) with the word x_i replaced by a phrase x_S:

    E_S = sum_k p(x~_S,k | x_-S) f(x_-S, x~_S,k) / sum_k p(x~_S,k | x_-S)
    a_S = log2-odds(f(x)) - log2-odds(E_S)                      (or the difference of probabilities)

where p(x~_S | x_-S) is the product of the masked LM's probabilities at one mask per word of S, all masked at once
(``models/mlm/phrases.py``: the k most likely phrases under it, exactly). The original phrase is not excluded
(it contributes f(x), a zero difference), as for one word.

The phrases: with sentences or spans as the players (``models/granularity.py``), each unit is a phrase and gets
its a_S; otherwise windows of ``width`` consecutive words inside one segment (a segment shorter than the width is
one phrase), slid by one word, and each word gets the mean a_S of the windows covering it, as Captum's occlusion
does. Width 1 is word-level IM exactly. Counterfactuals go through the one perturbation engine (``mlm`` operator
with the phrases as the fill), all in one batched call: n_phrases x k classifier rows, one masked-LM input per
phrase.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution
from explainers.methods.input_marginalization import (
    MASKED_LM_HELP,
    MaskedLMMethod,
    _log_softmax,
    marginal,
)
from explainers.params import ParamError, param
from explainers.registry import register
from explainers.scores import SCORES, log_odds
from models import Operator
from models.granularity import is_units
from models.mlm import BUILT_IN_MLM, FixedFill
from models.mlm.phrases import phrase_top_k
from models.perturb import perturbed_logits


def phrase_windows(segments, width: int) -> list[range]:
    """Windows of ``width`` consecutive words, slid by one, never crossing from the text into the pair; a segment
    shorter than ``width`` is one window."""
    spans, start = [], 0
    segments = list(segments)
    while start < len(segments):
        stop = start
        while stop < len(segments) and segments[stop] == segments[start]:
            stop += 1
        last = max(start, stop - width)
        spans += [range(s, min(s + width, stop)) for s in range(start, last + 1)]
        start = stop
    return spans


@register
class PhraseInputMarginalization(MaskedLMMethod):
    id = "input_marginalization_phrase"
    contrast_support = "unsupported"  # log2-odds of a marginal, as word-level IM
    label = "Input Marginalization (phrases)"
    family = "mlm"
    description = ("Replace a run of consecutive words by the masked LM's likely phrases and compare the prediction "
                   "with its likelihood-weighted average over them (log2-odds); words get the mean over their "
                   "phrases.")
    reference = "paper 000 section 7 (phrase level) on Eqs. 3-4 (IM-top10, renormalized); Kim et al. 2020"

    @dataclass(frozen=True)
    class Params:
        masked_lm: str = param(BUILT_IN_MLM, "Masked LM", MASKED_LM_HELP, server_path=True)
        width: int = param(2, "Phrase width (words)", "Consecutive words marginalized together (1 = word-level "
                           "IM); ignored when sentences or spans are the players.", min=1, max=8)
        k: int = param(10, "k (top-k phrases)", "Most likely phrases per span, weights renormalized.", min=1, max=200)
        score: str = param("log2-odds", "Score", "Difference of log2-odds (paper 000 Eq. 4) or of probabilities.",
                           choices=SCORES)

    presets = {
        "top10-bigrams": {"width": 2, "k": 10, "score": "log2-odds"},
        "top10-trigrams": {"width": 3, "k": 10, "score": "log2-odds"},
    }

    def removal_operator(self):
        return Operator.MLM

    def _spans(self, encoding) -> list[range]:
        if is_units(encoding):
            return list(encoding.groups)
        return phrase_windows(encoding.word_segment, self.params.width)

    def estimate_passes(self, encoding):
        return len(self._spans(encoding)) * self.params.k + 1, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        words_of = encoding.base if is_units(encoding) else encoding
        n = words_of.n_words
        if n == 0:
            raise ParamError("The input has no words to attribute.")
        spans = self._spans(encoding)
        filler = self.filler()
        ranked = phrase_top_k(filler, words_of, spans, k=p.k)
        # row 0: the original; then one row per (phrase, candidate), filled through the perturbation engine
        words = list(words_of.words)
        rows, owner = [list(words)], [-1]
        keep = [np.ones(n, dtype=bool)]
        for index, (span, candidates) in enumerate(zip(spans, ranked)):
            for candidate in candidates:
                filled = list(words)
                filled[span.start:span.stop] = candidate.words
                rows.append(filled)
                owner.append(index)
                row_keep = np.ones(n, dtype=bool)
                row_keep[span.start:span.stop] = False
                keep.append(row_keep)
        owner = np.asarray(owner)
        logits = perturbed_logits(classifier, words_of, np.array(keep), Operator.MLM, filler=FixedFill(rows))
        if p.score == "log2-odds":
            original = float(log_odds(logits[:1], target)[0])
        else:
            original = float(np.exp(_log_softmax(logits[:1])[0, target]))
        phrase_scores = np.zeros(len(spans))
        table, empty = [], []
        for index, (span, candidates) in enumerate(zip(spans, ranked)):
            text = " ".join(words[span.start:span.stop])
            if not candidates:
                empty.append(text)
                table.append({"phrase": text, "words": [span.start, span.stop], "score": 0.0, "candidates": []})
                continue
            weights = np.array([c.probability for c in candidates])
            chunk = logits[owner == index]
            phrase_scores[index] = original - marginal(chunk, weights, target, p.score)
            table.append({"phrase": text, "words": [span.start, span.stop], "score": float(phrase_scores[index]),
                          "mass": float(weights.sum()),
                          "top1_is_original": candidates[0].matches(words[span.start:span.stop]),
                          "candidates": [[" ".join(c.words), round(c.probability, 6)] for c in candidates[:5]]})
        if is_units(encoding):
            scores, how = phrase_scores, "one score per sentence / span (the phrase)"
        else:
            scores, covering = np.zeros(n), np.zeros(n)
            for span, value in zip(spans, phrase_scores):
                scores[span.start:span.stop] += value
                covering[span.start:span.stop] += 1
            scores, how = scores / covering, f"each word: the mean over the {p.width}-word phrases covering it"
        warnings = self.stand_in_warning()
        if empty:
            warnings.append(f"No candidate phrase for {len(empty)} phrase(s) ({', '.join(empty[:5])}): they get 0.")
        masses = [row["mass"] for row in table if row["candidates"]]
        return Attribution(
            word_scores=scores,
            baseline=f"phrase replaced by the masked LM's top-{p.k} phrases (one mask per word, product of the "
                     f"masks' probabilities, weights renormalized) from '{getattr(filler, 'name', '?')}'",
            warnings=warnings,
            details={"score": p.score, "phrases": len(spans), "word_scores": how, "counterfactuals": len(rows) - 1,
                     "mean_candidate_mass": float(np.mean(masses)) if masses else 0.0,
                     "mlm_forward_passes": len(spans), "masked_lm": self.filler_details(), "phrase_table": table})
