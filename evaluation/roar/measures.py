"""Importance measures for ROAR: explainer ids (with short aliases), their settings, and scores per example.

A measure is any registered explainer (``explainers.REGISTRY``), named by its id or an alias (ig, loo,
gradient, ...), optionally with a preset (``ig:paper-001``). ``random`` is ROAR's own random baseline
(``roar_masking.random_scores``), always included. Settings:
- ``cheap`` (the CPU default): the paper preset with fewer samples/steps where a method is expensive
  (IG 10 right-Riemann steps instead of 50, LIME and Kernel SHAP 50 samples), so a small study finishes in minutes;
- ``paper``: the paper presets unchanged (paper 001 section 4 for the gradient measures, as its ROAR code ran
  them: Input x Gradient and IG with |.|, the ``paper-001-code`` presets; paper 000 for LOO (LOOempty), IM
  (IM-top10), LIME and LIME-BERT).
Importance is computed once per (model, example, measure, target) through the explanation cache, so every
ratio, seed and cell (and a restarted study) reuses it.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from evaluation.roar.masking import random_scores
from evaluation.runs.jobs import CellStopped
from explainers import REGISTRY, ParamError, create, format_spec, parse_spec, split_spec
from explainers.cache import DEFAULT_CACHE, explain_cached
from models import Encoding, TextClassifier

RANDOM = "random"
ALIASES = {
    "ig": "integrated_gradients", "loo": "leave_one_out", "gradient": "saliency", "grad": "saliency",
    "ixg": "input_x_gradient", "input-x-gradient": "input_x_gradient", "x-gradient": "input_x_gradient",
    "shap": "kernel_shap", "rollout": "attention_rollout", "smoothgrad": "smoothgrad", "occlusion": "occlusion",
    "im": "input_marginalization", "lime-bert": "lime_bert", "limebert": "lime_bert",  # paper 000's names
}
SETTINGS = ("cheap", "paper")
# method id -> (preset, parameter overrides); overrides a method does not have are dropped
Settings = dict[str, tuple[str | None, dict[str, Any]]]
PAPER_SETTINGS: Settings = {
    "integrated_gradients": ("paper-001-code", {}), "saliency": ("paper-001", {}),
    "input_x_gradient": ("paper-001-code", {}),
    "leave_one_out": ("paper-000-empty", {}), "lime": ("paper-000", {}),
    "input_marginalization": ("paper-000-top10", {}), "lime_bert": ("paper-000", {}),
}
CHEAP_SETTINGS: Settings = {
    **PAPER_SETTINGS,
    "integrated_gradients": ("paper-001-code", {"n_steps": 10}),
    "lime": (None, {"n_samples": 50}),
    "lime_bert": ("paper-000", {"n_samples": 50}),
    "kernel_shap": (None, {"n_samples": 50}),
    "shapley_sampling": (None, {"n_samples": 10}),
}


@dataclass(frozen=True)
class Measure:
    id: str  # as named in the study (an alias, an explainer id, or "random")
    method: str  # explainer id or "random"
    preset: str | None = None
    params: dict = field(default_factory=dict)

    @property
    def is_random(self) -> bool:
        return self.method == RANDOM

    def label(self) -> str:
        if self.is_random:
            return "Random (ROAR baseline)"
        extra = [self.preset] if self.preset else []
        extra += [f"{k}={v}" for k, v in sorted(self.params.items())]
        return REGISTRY[self.method].label + (f" ({', '.join(extra)})" if extra else "")

    def explainer(self):
        return None if self.is_random else create(self.method, preset=self.preset, **self.params)

    def to_dict(self) -> dict:
        return {"id": self.id, "method": self.method, "preset": self.preset, "params": dict(self.params)}

    @classmethod
    def from_dict(cls, data: dict) -> Measure:
        return cls(data["id"], data["method"], data.get("preset"), dict(data.get("params") or {}))


def random_measure() -> Measure:
    return Measure(RANDOM, RANDOM)


def method_of(name: str) -> str:
    name = name.strip().lower()
    return ALIASES.get(name, name)


def resolve_measure(spec: str, settings: str = "cheap", params: dict | None = None) -> Measure:
    """``ig``, ``ig:paper-001``, ``integrated_gradients`` ... -> a Measure with its preset and parameters."""
    if settings not in SETTINGS:
        raise ParamError(f"Unknown measure settings '{settings}'; use {', '.join(SETTINGS)}.")
    name, preset = split_spec(spec)
    if not name:
        raise ParamError("An empty measure name was given.")
    method = method_of(name)
    if method == RANDOM:
        return random_measure()
    if method not in REGISTRY:
        aliases = ", ".join(f"{a} -> {m}" for a, m in ALIASES.items() if m in REGISTRY)
        raise ParamError(f"Unknown importance measure '{name}'. Known: {', '.join(REGISTRY)}, random; aliases: "
                         f"{aliases}.")
    cls = REGISTRY[method]
    known = {f.name for f in dataclasses.fields(cls.Params)}
    chosen: str | None
    overrides: dict[str, Any]
    if preset:
        parse_spec(format_spec(method, preset))  # ParamError unless the preset is one of the method's
        chosen, overrides = preset, {}
    else:
        table = CHEAP_SETTINGS if settings == "cheap" else PAPER_SETTINGS
        chosen, overrides = table.get(method, (None, {}))
        if chosen is not None and chosen not in cls.presets:
            chosen = None
    overrides = {k: v for k, v in {**overrides, **(params or {})}.items() if k in known}
    unknown = sorted(set(params or {}) - known)
    if unknown:
        raise ParamError(f"{method} has no parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}.")
    measure = Measure(name, method, chosen, overrides)
    measure.explainer()  # validates the values now, not in the middle of a study
    return measure


def importance_scores(measure: Measure, classifier: TextClassifier, encodings: list[Encoding],
                      example_ids: list[str], targets: list[int | None], seed: int,
                      cache=DEFAULT_CACHE, should_stop=None) -> list[np.ndarray]:
    """Word scores of every example (random: from the seed and the example id); ``should_stop`` is polled
    between examples (finished examples stay in the explanation cache)."""
    if measure.is_random:
        return [random_scores(i, e.n_words, seed) for i, e in zip(example_ids, encodings)]

    explainer = measure.explainer()
    out = []
    for encoding, target in zip(encodings, targets):
        if should_stop is not None and should_stop():
            raise CellStopped(f"stopped while computing {measure.id} importance")
        out.append(np.asarray(explain_cached(explainer, classifier, encoding, target, cache=cache).word_scores,
                              dtype=float))
    return out
