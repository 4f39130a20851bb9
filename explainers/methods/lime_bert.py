"""LIME-BERT (paper 000 section 2 and section 6): LIME whose removed words are filled by the masked LM's top-1
word instead of being deleted.

Everything but the removal is LIME's (``explainers/methods/lime.py``: ``fit_lime`` with the same sampling,
kernel and surrogate choices and presets); the removal is the perturbation engine's ``mlm`` operator with
the masked-LM filler, the same one DeletionBERT, ROAR-BERT and leave-one-out-with-fill use. Fill modes:
``joint`` masks all removed words of a sample at once (one masked-LM pass per sample); ``sequential`` fills
them left to right, each conditioned on the words already filled (paper 000's code default; its footnote 3
finds both give similar results). Every sample therefore costs one classifier pass plus one (joint) or up
to n_removed (sequential) masked-LM passes.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution
from explainers.mask_forward import MaskForward
from explainers.methods.input_marginalization import MASKED_LM_HELP, MaskedLMMethod
from explainers.methods.lime import LimeExplainer, fit_lime
from explainers.params import param
from explainers.registry import register
from models import Operator
from models.mlm.filler import BUILT_IN_MLM, FILL_MODES


def _like(name: str, default):
    """LIME's parameter ``name`` (label, help, range) with another default."""
    return dataclasses.field(default=default, metadata=LimeExplainer.Params.__dataclass_fields__[name].metadata)


class FilledMaskForward(MaskForward):
    """``MaskForward`` whose removed words are filled by a masked LM (the engine's ``mlm`` operator)."""

    def __init__(self, classifier, encoding, filler, target: int, score: str):
        super().__init__(classifier, encoding, Operator.MLM, target, score, filler=filler)
        self.mlm_passes = 0  # masked-LM sequences run for the fills

    def _logits(self, rows: np.ndarray) -> np.ndarray:
        if hasattr(self.filler, "forward_passes"):  # the filler counts its passes (remembered fills cost none)
            before = self.filler.forward_passes
            logits = super()._logits(rows)
            self.mlm_passes += self.filler.forward_passes - before
            return logits
        removed = (~rows).sum(axis=1)
        sequential = getattr(self.filler, "mode", "joint") == "sequential"
        self.mlm_passes += int(removed.sum() if sequential else (removed > 0).sum())
        return super()._logits(rows)


@register
class LimeBert(MaskedLMMethod, LimeExplainer):
    id = "lime_bert"
    label = "LIME-BERT"
    family = "mlm"
    description = "LIME whose removed words are replaced by the masked LM's top-1 word instead of being deleted."
    reference = "paper 000 sections 2 and 6 (LIME-BERT), Ribeiro et al. 2016 (LIME)"
    stochastic = True

    @dataclass(frozen=True)
    class Params(LimeExplainer.Params):
        # paper 000's LIME settings (section 6.1, the lime package's text explainer) are the defaults here
        n_samples: int = _like("n_samples", 1000)
        sampling: str = _like("sampling", "uniform-count")
        kernel: str = _like("kernel", "lime-text")
        kernel_width: float = _like("kernel_width", 25.0)
        surrogate: str = _like("surrogate", "ridge")
        alpha: float = _like("alpha", 1.0)
        operator: str = param("mlm", "Removal operator", "LIME-BERT always fills removed words with the masked LM.",
                              choices=("mlm",))
        score: str = _like("score", "probability")
        masked_lm: str = param(BUILT_IN_MLM, "Masked LM", MASKED_LM_HELP, server_path=True)
        fill_mode: str = param("joint", "Fill mode", "joint: every removed word of a sample predicted at once; "
                               "sequential: left to right, conditioned on the earlier fills (paper 000's code).",
                               choices=FILL_MODES)

    presets = {
        "paper-000": {"fill_mode": "sequential"},
        "paper-000-joint": {"fill_mode": "joint"},
        "paper-000-bert": {"fill_mode": "sequential", "masked_lm": "bert-base-uncased"},
    }

    def removal_operator(self):
        return Operator.MLM

    def estimate_passes(self, encoding):
        # n_samples classifier passes + about as many masked-LM passes (joint; sequential: x words removed)
        mlm = self.params.n_samples * (1 if self.params.fill_mode == "joint" else max(1, encoding.n_words // 2))
        return self.params.n_samples + 1 + mlm, 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        filler = self.filler()
        forward = FilledMaskForward(classifier, encoding, filler, target, p.score)
        scores = fit_lime(forward, encoding, p)
        warnings = self.stand_in_warning()
        if not np.abs(scores).sum():
            warnings.append("Every coefficient of the surrogate is 0 (the regularization removed all words); "
                            "lower alpha or use the ridge surrogate.")
        return Attribution(word_scores=scores, warnings=warnings,
                           baseline=f"words replaced by the top-1 word of '{getattr(filler, 'name', '?')}' "
                                    f"({p.fill_mode} fill)",
                           details={**forward.details(), "mlm_forward_passes": forward.mlm_passes,
                                    "samples": p.n_samples, "surrogate": p.surrogate,
                                    "fill_mode": p.fill_mode, "masked_lm": self.filler_details()})
