"""Ensembles of explanations (paper 003 section 3.4): the mean of |a| / sum |a| over several methods.

Each member's word scores are made non-negative and normalized to sum to 1 (the sign is dropped, as in
paper 003's code), then averaged, so the ensemble's scores sum to 1 as well. Members are computed through
the explanation cache (a page that already shows them pays nothing) with the same target class.

- ``ensemble``: a chosen subset, by default LIME + KernelSHAP + IG ("Ensemble (Top 3)" of paper 003);
- ``ensemble_all``: every method of the gradient, perturbation and attention families with its defaults
  (paper 003's "all methods" used its seven; preset ``paper-003-all`` picks exactly those).
Members are written ``method`` or ``method:preset``, comma-separated.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explainers import cache  # the members go through the same cache as the page
from explainers.aggregate import normalize
from explainers.base import Attribution, Explainer
from explainers.params import ParamError, param
from explainers.registry import REGISTRY, create, parse_spec, register

MEMBER_FAMILIES = ("gradient", "perturbation", "attention")
TOP3 = "lime,kernel_shap,integrated_gradients"
PAPER_003_ALL = ("saliency:paper-003,input_x_gradient:paper-003,integrated_gradients:paper-003,lime:paper-003,"
                 "kernel_shap:paper-003,attention:paper-003-average,attention_rollout:paper-003")


def all_members() -> list[str]:
    """Every registered method that can be an ensemble member by default (no MLM, no training)."""
    return [m for m, cls in REGISTRY.items()
            if cls.family in MEMBER_FAMILIES and not cls.needs_mlm and not cls.trains]


def parse_members(spec: str) -> list[tuple[str, str | None]]:
    spec = spec.strip()
    items = all_members() if spec == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    members = []
    for item in items:
        try:
            method, preset = parse_spec(item)
        except ParamError as error:
            raise ParamError(f"Unknown ensemble member '{item}': {error}") from None
        if REGISTRY[method].family == "ensemble":
            raise ParamError(f"An ensemble cannot contain another ensemble ('{method}').")
        members.append((method, preset))
    if not members:
        raise ParamError("An ensemble needs at least one member method.")
    return members


def ensemble_scores(word_scores: list[np.ndarray]) -> np.ndarray:
    """Mean over members of |a| / sum |a| (paper 003, footnote 1 of section 3.4)."""
    return np.mean([normalize(scores, "abs-sum") for scores in word_scores], axis=0)


@register
class Ensemble(Explainer):
    id = "ensemble"
    label = "Ensemble (chosen methods)"
    family = "ensemble"
    description = "The mean of each chosen method's |score| / sum |score|; paper 003's 'Top 3' by default."
    reference = "paper 003 section 3.4 (Ensemble (Top 3): LIME + KernelSHAP + IG)"

    @dataclass(frozen=True)
    class Params:
        members: str = param(TOP3, "Members", "Comma-separated method ids, each optionally ':preset' "
                             "(or 'all').")

    presets = {"paper-003-top3": {"members": "lime:paper-003,kernel_shap:paper-003,integrated_gradients:paper-003"}}

    def is_signed(self) -> bool:
        return False

    def __init__(self, params=None, preset=None, **overrides):
        super().__init__(params, preset, **overrides)
        self.members = parse_members(self.params.members)

    def cache_identity(self) -> dict:  # 'all' depends on which methods are registered
        return {**super().cache_identity(), "resolved_members": self.members}

    def estimate_passes(self, encoding):
        forward = backward = 0
        for method, preset in self.members:
            f, b = create(method, preset=preset).estimate_passes(encoding)
            forward, backward = forward + f, backward + b
        return forward, backward

    def attribute(self, classifier, encoding, target):
        predicted = int(np.argmax(classifier.logits_of(encoding)))
        member_target = None if target == predicted else target  # reuse the page's "predicted class" entries
        scores, used, warnings = [], [], []
        for method, preset in self.members:
            try:
                explanation = cache.explain_cached(create(method, preset=preset), classifier, encoding,
                                                   member_target, cache=cache.DEFAULT_CACHE)
            except Exception as error:  # a member that cannot run here (e.g. no attention weights) is left out
                warnings.append(f"{REGISTRY[method].label} left out of the ensemble: {error}")
                continue
            scores.append(explanation.word_scores)
            used.append({"method": method, "preset": preset, "params": explanation.provenance["params"],
                         "seed": explanation.provenance.get("seed")})
        if not scores:
            raise ParamError("No member of the ensemble could be computed: " + " ".join(warnings))
        return Attribution(word_scores=ensemble_scores(scores), warnings=warnings,
                           baseline="members' own baselines (see details)",
                           details={"members": used, "normalization": "|a| / sum |a| per member, then the mean"})


@register
class EnsembleAll(Ensemble):
    id = "ensemble_all"
    label = "Ensemble (all methods)"
    description = "The mean of |score| / sum |score| over every gradient, perturbation and attention method."
    reference = "paper 003 section 3.4 (Ensemble (All Methods))"

    @dataclass(frozen=True)
    class Params:
        members: str = param("all", "Members", "'all' (every gradient, perturbation and attention method with "
                             "its defaults) or comma-separated method ids, each optionally ':preset'.")

    presets = {"paper-003-all": {"members": PAPER_003_ALL}}
