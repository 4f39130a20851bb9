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
from explainers.shared_passes import explain_all, shared_pass_of

MEMBER_FAMILIES = ("gradient", "perturbation", "attention")
TOP3 = "lime,kernel_shap,integrated_gradients"
PAPER_003_ALL = ("saliency:paper-003,input_x_gradient:paper-003,integrated_gradients:paper-003,lime:paper-003,"
                 "kernel_shap:paper-003,attention:paper-003-average,attention_rollout:paper-003")


def all_members() -> list[str]:
    """Every registered method that can be an ensemble member by default (no MLM, no training, not one that waits for
    a click: SIG runs one IG path per word)."""
    return [m for m, cls in REGISTRY.items()
            if cls.family in MEMBER_FAMILIES and not cls.needs_mlm and not cls.trains and not cls.expensive]


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

    def member_explainers(self) -> list[Explainer]:
        return [create(method, preset=preset, contrast=self.contrast) for method, preset in self.members]

    @staticmethod
    def member_target(classifier, encoding, target: int | None) -> int | None:
        """The target the members are explained for: None (the page's "predicted class" entries) when the ensemble
        explains the predicted class."""
        if target is None:
            return None
        return None if target == int(np.argmax(classifier.logits_of(encoding))) else target

    def estimate_passes(self, encoding):
        """Every member's passes, a pass two members share once (``explainers/plan.py`` also leaves out the
        members cached or chosen on the page)."""
        forward = backward = 0
        shared = set()
        for member in self.member_explainers():
            key = shared_pass_of(member)
            if key is not None and key in shared:
                continue
            shared.add(key)
            f, b = member.estimate_passes(encoding)
            forward, backward = forward + f, backward + b
        return forward, backward

    def attribute(self, classifier, encoding, target):
        member_target = self.member_target(classifier, encoding, target)
        explainers = self.member_explainers()
        warnings = []

        def left_out(index, error):  # a member that cannot run here (e.g. no attention weights) is left out
            warnings.append(f"{REGISTRY[explainers[index].id].label} left out of the ensemble: {error}")

        explanations = explain_all(explainers, classifier, encoding, member_target, cache=cache.DEFAULT_CACHE,
                                   on_error=left_out)  # members that share a pass compute it once
        scores, used = [], []
        for (method, preset), explanation in zip(self.members, explanations):
            if explanation is None:
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
