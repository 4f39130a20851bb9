"""The attack's settings (paper 003 section 3.5's defaults, the thesis code's preset) and its passes (the cost in
seconds, for one input or a document in windows: ``documents.attack_seconds``)."""
from __future__ import annotations

from dataclasses import dataclass

from explainers.params import ParamError, coerce, param

ATTACKED_METHODS = {
    "saliency": "Gradients (L2 norm over the hidden dimension; the thesis code's signed sum as an option)",
    "input_x_gradient": "Gradient x Input",
    "integrated_gradients": "Integrated Gradients ([PAD] baseline, right Riemann sum)",
}
OBJECTIVES = ("unconstrained", "constrained")


@dataclass(frozen=True)
class AttackConfig:
    """The attack's settings; defaults are the thesis's (section 3.5)."""

    objective: str = param("unconstrained", "Objective", "unconstrained: only the class must stay (Ghorbani et al.); "
                           "constrained: the class probability must stay too (the thesis's variant).",
                           choices=OBJECTIVES)
    epsilon: float = param(2.0, "Epsilon (L-inf bound)", "Largest change of any word-embedding coordinate.",
                           min=0.0, step=0.1)
    k_fraction: float = param(0.15, "Top-k share of the length", "k = this share of the word tokens, rounded down.",
                              min=0.01, max=1.0, step=0.01)
    steps: int = param(500, "Steps", "Most optimization steps.", min=1, max=5000)
    learning_rate: float = param(0.1, "Learning rate", "Adam's learning rate.", min=1e-6, step=0.01)
    halve_every: int = param(200, "Halve the rate every", "Steps between halvings of the learning rate.", min=1)
    alpha: float = param(1.0, "Alpha (explanation term)", "Weight of the top-k term (constrained objective).", min=0.0)
    beta: float = param(1.0, "Beta (prediction term)", "Weight of the prediction-matching term (constrained).", min=0.0)
    tolerance: float = param(1e-5, "Early-stop tolerance", "Stop when the mean |change of delta| stays below this ...",
                             min=0.0, step=1e-6)
    patience: int = param(20, "... for this many steps", "Consecutive steps for the early stop.", min=1)
    gradient_reduction: str = param("l2", "Gradients: reduction over the embedding",
                                    "l2: the gradient's norm. sum: the thesis code's signed sum, which is exactly 0 "
                                    "(float noise) on models that normalize the embeddings with a LayerNorm (BERT, "
                                    "RoBERTa, MiniLM): LayerNorm's input gradient sums to 0 over the hidden units.",
                                    choices=("l2", "sum"))
    ig_steps: int = param(50, "IG steps", "Points of the Riemann sum when Integrated Gradients is attacked.", min=2,
                          max=300)
    loop_ig_steps: int = param(0, "IG steps inside the loop",
                               "0: the loop differentiates the full IG (the thesis). A smaller number attacks a "
                               "coarser IG inside the optimization (about ig_steps / this times cheaper); the "
                               "returned iterate is then re-explained with the full IG, so the measures read the "
                               "real explanation.", min=0, max=300)
    double_backprop: bool = param(True, "Differentiate through the explanation",
                                  "On: create_graph=True, the explanation term reaches delta (correct). Off: the "
                                  "thesis code's detached gradients.")
    start: str = param("zero", "Start", "zero, or the thesis code's U[0, 1) draw.", choices=("zero", "uniform"))
    match: str = param("probability", "Matched output", "What the constrained term keeps: the predicted class's "
                       "probability (thesis) or its logit (thesis code).", choices=("probability", "logit"))
    constrained_pick: str = param("best", "Constrained: returned iterate", "best objective (thesis) or the last "
                                  "iterate (thesis code).", choices=("best", "last"))
    seed: int = param(0, "Seed", "Seed of the U[0, 1) start.", min=0)


PRESETS = {
    "paper-003": {},
    "paper-003-code": {"double_backprop": False, "start": "uniform", "match": "logit", "constrained_pick": "last",
                       "gradient_reduction": "sum"},
}


def config_for(preset: str | None = None, **overrides) -> AttackConfig:
    if preset is not None and preset not in PRESETS:
        raise ParamError(f"Unknown attack preset '{preset}'. Choose from: {', '.join(PRESETS)}.")
    return coerce(AttackConfig, {**PRESETS.get(preset or "paper-003", {}), **overrides})


def passes(method: str, config: AttackConfig) -> tuple[int, int]:
    """(forward, backward) passes of a full attack: each step is a forward, a backward for the explanation and one
    more through it (the double back-propagation counts as a backward); IG does that at every point of its path."""
    points = loop_points(method, config)
    backward_per_point = 2 if config.double_backprop else 1
    return config.steps * points, config.steps * points * backward_per_point


def loop_points(method: str, config: AttackConfig) -> int:
    """Path points differentiated at every step: IG's (or the coarser loop's), 1 for the other methods."""
    if method != "integrated_gradients":
        return 1
    return config.loop_ig_steps or config.ig_steps
