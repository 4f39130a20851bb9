"""DeepLIFT (Shrikumar et al. 2017), rescale rule, on the word embeddings.

Captum's ``DeepLift`` needs an ``nn.Module``: the classifier's model is wrapped so that it maps word
embeddings to outputs. DeepLIFT's rules cover ReLU-like, sigmoid/tanh and softmax *modules*; GELU,
LayerNorm and the functional softmax inside attention are treated as linear, so on transformers the scores
do not add up to f(input) - f(baseline). The completeness error is computed, stored in the provenance
and shown as a warning when it is large (the stack notes measured ~0.75 on BERT). Paper 004 (section 4)
compares against DeepLift.

Captum registers hooks on the model's modules while it runs; it works on a structural copy of the model
whose parameters are shared, so other explanations running at the same time never see the hooks.
"""
from __future__ import annotations

import copy
import warnings as python_warnings
from dataclasses import dataclass

import torch

from explainers.base import Attribution, Explainer
from explainers.baseline_checks import baseline_gap_warning
from explainers.captum_lazy import captum_attr
from explainers.embedding_forward import BASELINE_LABELS, OUTPUTS, baseline_embeddings, embedding_function
from explainers.params import param
from explainers.registry import register

COMPLETENESS_WARNING = 0.05  # relative to |f(x) - f(b)|


def hook_safe_copy(model: torch.nn.Module) -> torch.nn.Module:
    """A copy of the module tree that shares every parameter and buffer (no weights are copied)."""
    memo = {id(t): t for t in list(model.parameters()) + list(model.buffers())}
    return copy.deepcopy(model, memo)


class EmbeddingModel(torch.nn.Module):
    """nn.Module view of ``embedding_function``: word embeddings -> class outputs."""

    def __init__(self, classifier, encoding, output: str):
        super().__init__()
        self.model = hook_safe_copy(classifier.model)
        self._view = classifier.with_model(self.model, fingerprint=classifier.fingerprint)
        self._forward, _ = embedding_function(self._view, encoding, output)

    def forward(self, inputs_embeds: torch.Tensor) -> torch.Tensor:
        return self._forward(inputs_embeds)


@register
class DeepLift(Explainer):
    id = "deeplift"
    label = "DeepLIFT"
    family = "gradient"
    description = "Differences from a baseline propagated backwards with the rescale rule; exact for ReLU " \
                  "networks, approximate for transformers (see the completeness error)."
    reference = "Shrikumar et al. 2017 (Captum DeepLift); paper 004 section 4"
    needs_gradients = True

    @dataclass(frozen=True)
    class Params:
        baseline: str = param("pad", "Baseline", "; ".join(f"{k}: {v}" for k, v in BASELINE_LABELS.items()),
                              choices=tuple(BASELINE_LABELS))
        output: str = param("logit", "Output differentiated", choices=OUTPUTS)

    presets = {"pad-baseline": {"baseline": "pad"}, "zero-baseline": {"baseline": "zero"}}

    def estimate_passes(self, encoding):
        return 4, 2

    def attribute(self, classifier, encoding, target):
        p = self.params
        module = EmbeddingModel(classifier, encoding, p.output)
        _, embeddings = embedding_function(classifier, encoding, p.output)
        baseline = baseline_embeddings(classifier, encoding, p.baseline)
        with python_warnings.catch_warnings():  # Captum announces its (temporary, copy-only) hooks
            python_warnings.filterwarnings("ignore", message=".*hooks and attributes.*")
            attribution = captum_attr.DeepLift(module).attribute(embeddings.clone().requires_grad_(),
                                                                 baselines=baseline, target=target)
        scores = attribution[0].sum(dim=-1).detach()
        with torch.no_grad():
            f_input = float(module(embeddings)[0, target])
            gap = f_input - float(module(baseline)[0, target])
        error = float(scores.sum()) - gap
        details = {"completeness_error": error, "f(input) - f(baseline)": gap,
                   "sum_of_attributions": float(scores.sum())}
        warnings = baseline_gap_warning(f_input, gap, p.baseline)
        if abs(error) > COMPLETENESS_WARNING * max(abs(gap), 1e-6):
            warnings.append(f"DeepLIFT's scores add up to {float(scores.sum()):+.3g}, not f(input) - f(baseline) = "
                            f"{gap:+.3g} (completeness error {error:+.3g}, {abs(error) / max(abs(gap), 1e-9):.0%}): "
                            f"its rules do not cover this model's GELU, LayerNorm and attention softmax, so read "
                            f"these scores with caution.")
        return Attribution(token_scores=scores.cpu().numpy(), baseline=BASELINE_LABELS[p.baseline],
                           details=details, warnings=warnings)
