"""Leave-one-out with MLM fill: each word in turn replaced by the masked LM's top-1 word (paper 000 section 4's
LOO family, with the MLM-fill operator of DeletionBERT / ROAR-BERT instead of deletion).

a_i = s(x) - s(x with word i replaced by the top-1 word), s = the target's log2-odds (paper 000) or probability.
With the original word allowed as its own replacement this is IM with k = 1 (a word the masked LM predicts
as itself gets exactly 0); ``exclude_original`` takes the best *other* word instead.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution
from explainers.methods.input_marginalization import MASKED_LM_HELP, MaskedLMMethod
from explainers.params import param
from explainers.registry import register
from explainers.scores import SCORES, class_score
from models import Operator
from models.mlm.filler import BUILT_IN_MLM
from models.perturb import perturbed_logits


@register
class LeaveOneOutFill(MaskedLMMethod):
    id = "leave_one_out_fill"
    label = "Leave-one-out (MLM fill)"
    family = "mlm"
    description = "Replace each word in turn by the masked LM's most likely word and measure the target's drop."
    reference = "paper 000 section 4 (LOO in log2-odds) with the MLM-fill operator of DeletionBERT (section 3.3)"

    @dataclass(frozen=True)
    class Params:
        masked_lm: str = param(BUILT_IN_MLM, "Masked LM", MASKED_LM_HELP, server_path=True)
        exclude_original: bool = param(False, "Exclude the original word", "Fill with the best word other than "
                                       "the original (otherwise a predictable word is replaced by itself).")
        score: str = param("log2-odds", "Score", "Difference of log2-odds (paper 000) or of probabilities.",
                           choices=SCORES)

    presets = {"paper-000": {"exclude_original": False, "score": "log2-odds"},
               "other-word": {"exclude_original": True, "score": "log2-odds"}}

    def removal_operator(self):
        return Operator.MLM

    def estimate_passes(self, encoding):
        return 2 * encoding.n_words + 1, 0  # n_words masked-LM passes too

    def attribute(self, classifier, encoding, target):
        n = encoding.n_words
        filler = self.filler()
        keep = np.ones((n + 1, n), dtype=bool)
        keep[np.arange(1, n + 1), np.arange(n)] = False  # row 0 = the original, row i+1 = word i filled
        logits = perturbed_logits(classifier, encoding, keep, Operator.MLM, filler=filler)
        scores = class_score(logits, target, self.params.score)
        return Attribution(word_scores=scores[0] - scores[1:], warnings=self.stand_in_warning(),
                           baseline=f"word replaced by the top-1 word of '{getattr(filler, 'name', '?')}'"
                                    + (" (other than itself)" if self.params.exclude_original else ""),
                           details={"score": self.params.score, "mlm_forward_passes": n,
                                    "masked_lm": self.filler_details()})
