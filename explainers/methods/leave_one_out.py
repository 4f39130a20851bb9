"""Leave-one-out: remove one word at a time and record the drop of the target's score.

a_i = s(x) - s(x without word i), with s the target's probability or its log2-odds (paper 000 Eq. 1
and section 4: all LOO variants in log-odds, log base 2). The removal operator comes from the shared
perturbation engine: delete = LOOempty, [UNK] = LOOunk, [PAD] = LOOzero as paper 000 implements it,
zero embedding = LOOzero as the literature defines it (Li et al. 2016).
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers.base import Attribution, Explainer
from explainers.params import param
from explainers.registry import register
from explainers.scores import SCORES, class_score
from explainers.shared_passes import SharedPass, removal_settings, without_each_word
from models import OPERATORS, Operator

LOO_OPERATORS = tuple(op.value for op in Operator if op is not Operator.MLM)


@register
class LeaveOneOut(Explainer):
    id = "leave_one_out"
    label = "Leave-one-out"
    family = "perturbation"
    description = "Remove each word in turn and measure how much the target's score drops."
    reference = "paper 000 Eq. 1 and section 4 (LOOempty / LOOunk / LOOzero)"

    @dataclass(frozen=True)
    class Params:
        operator: str = param("delete", "Removal operator", "How a word is removed (shared perturbation engine).",
                              choices=LOO_OPERATORS)
        score: str = param("log2-odds", "Score", "Difference of log2-odds (paper 000) or of probabilities.",
                           choices=SCORES)

    presets = {
        "paper-000-empty": {"operator": "delete", "score": "log2-odds"},
        "paper-000-unk": {"operator": "unk", "score": "log2-odds"},
        "paper-000-zero": {"operator": "pad", "score": "log2-odds"},
        "zero-embedding": {"operator": "zero", "score": "log2-odds"},
    }

    def estimate_passes(self, encoding):
        return encoding.n_words, 0

    def shared_pass(self) -> SharedPass:  # every score scale, and occlusion of window 1, from one batch
        return removal_settings(self.params.operator)

    def attribute(self, classifier, encoding, target):
        original = class_score(classifier.logits_of(encoding)[None], target, self.params.score)[0]
        removed = without_each_word(classifier, encoding, self.params.operator)
        scores = class_score(removed, target, self.params.score)
        return Attribution(word_scores=original - scores,
                           baseline=f"word removed by {OPERATORS[self.removal_operator()].label}",
                           details={"score": self.params.score})
