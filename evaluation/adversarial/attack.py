"""Adversarial attacks on explanations (paper 003, sections 2.3 and 3.5, after Ghorbani et al. 2019).

A perturbation delta of the word embeddings, with ||delta||_inf <= epsilon (kept there by clamping, as the thesis
code does), is optimized so that the explanation moves while the prediction does not:

- ``unconstrained`` (Ghorbani's top-k attack): minimize the clean top-k tokens' share of importance in the attacked
  explanation, sum_{i in topk(a_x)} |a_{x+d,i}| / sum|a_{x+d}|; the returned iterate is the best one whose predicted
  class is still the original class (none: the clean input, zero change).
- ``constrained`` (the thesis's variant, section 2.3): alpha * that share + beta * (m(x) - m(x+d))^2 with m the predicted
  class's probability, so the attacked input keeps the model's confidence too; the best iterate on that objective.

The explanation term must reach delta, so the attribution is differentiated with ``create_graph=True`` (double
back-propagation). The thesis code detaches it (its gradients come from ``.grad.data``): there the explanation term
reaches delta only through the "x input" factor, and for plain gradients not at all (notes 003, section 6.3 item 8).
The preset ``paper-003-code`` reproduces that, with the code's U[0, 1) start, its logit matching and its last-iterate
pick for the constrained attack. Attributions are the signed sum over the hidden dimension (thesis code) and only the
word tokens are perturbed and ranked (special tokens are never changed here; the thesis code perturbs every
position).
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import numpy as np
import torch

from explainers.embedding_forward import baseline_embeddings, embedding_function
from explainers.params import ParamError, coerce, param
from models import Encoding, ModelError, TextClassifier
from models import metering
from models.attention_kernel import eager_attention

from evaluation.adversarial import measures

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
    points = _loop_points(method, config)
    backward_per_point = 2 if config.double_backprop else 1
    return config.steps * points, config.steps * points * backward_per_point


def _loop_points(method: str, config: AttackConfig) -> int:
    """Path points differentiated at every step: IG's (or the coarser loop's), 1 for the other methods."""
    if method != "integrated_gradients":
        return 1
    return config.loop_ig_steps or config.ig_steps


def estimate_seconds(classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig) -> float:
    """The cost model's estimate (``models.metering``) for the whole step budget (an early stop ends sooner)."""
    forward, backward = passes(method, config)
    return metering.estimate_seconds(classifier, forward, backward, encoding.n_tokens)


class AttackError(ModelError):
    """An input or method the attack cannot handle; the message says what to do."""


@dataclass
class AttackResult:
    method: str
    config: dict
    tokens: list[str]
    positions: list[int]                  # token positions of the word tokens (the attacked features)
    k: int
    original_shares: np.ndarray           # |a|/sum|a| over ``positions``, clean input
    attacked_shares: np.ndarray           # the same on the returned iterate
    original_scores: np.ndarray           # signed attributions over ``positions``
    attacked_scores: np.ndarray
    original_class: int
    attacked_class: int
    original_probability: float           # m(x): probability of the original class
    attacked_probability: float           # m(x + delta)
    steps_taken: int
    stop_reason: str                      # "early stop", "step budget", "stopped by the user"
    delta_linf: float
    delta: np.ndarray                     # the returned perturbation at ``positions`` (positions x hidden)
    replaced_words: list[dict] = field(default_factory=list)  # nearest vocabulary token where it changed
    seconds: float = 0.0

    @property
    def class_kept(self) -> bool:
        return self.attacked_class == self.original_class

    @property
    def rank_change(self) -> float:
        return measures.rank_change(measures.top_k(self.original_shares, self.k),
                                    measures.top_k(self.attacked_shares, self.k))

    @property
    def top_k_sum_change(self) -> float:
        return measures.top_k_sum_change(self.original_shares, self.attacked_shares, self.k)

    @property
    def probability_change(self) -> float:
        return measures.probability_change(self.original_probability, self.attacked_probability)

    def measures(self) -> dict:
        return {"rank_change": self.rank_change, "top_k_sum_change": self.top_k_sum_change,
                "probability_change": self.probability_change, "class_kept": float(self.class_kept)}

    def to_dict(self) -> dict:
        out = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in asdict(self).items() if k != "delta"}
        return {**out, **self.measures()}


def differentiable_attribution(forward, embeds: torch.Tensor, baseline: torch.Tensor | None, target: int,
                               method: str, ig_steps: int, create_graph: bool, gradient_reduction: str = "l2"
                               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(token scores (T,), logits of ``embeds`` (C,), the attributed output summed) for one input (1, T, H).

    Gradient x Input and IG reduce the hidden dimension by a signed sum (a dot product, paper 003 section 2.2.2.1);
    plain gradients by ``gradient_reduction``."""
    if method == "integrated_gradients":
        # right Riemann sum alpha = 1/n ... 1 (the thesis code's DiffIntegratedGradients); the last point is the input
        alphas = torch.arange(1, ig_steps + 1, dtype=embeds.dtype, device=embeds.device) / ig_steps
        path = baseline + alphas[:, None, None] * (embeds - baseline)
        logits = forward(path)
        attributed = logits[:, target].sum()
        gradient = torch.autograd.grad(attributed, path, create_graph=create_graph, retain_graph=True)[0]
        scores = ((embeds - baseline) * gradient.mean(dim=0, keepdim=True)).sum(dim=-1)[0]
        return scores, logits[-1], attributed
    logits = forward(embeds)
    attributed = logits[0, target]
    gradient = torch.autograd.grad(attributed, embeds, create_graph=create_graph, retain_graph=True)[0]
    if method == "input_x_gradient":
        scores = (gradient * embeds).sum(dim=-1)[0]
    else:
        scores = gradient.norm(dim=-1)[0] if gradient_reduction == "l2" else gradient.sum(dim=-1)[0]
    return scores, logits[0], attributed


def _shares(scores: torch.Tensor) -> torch.Tensor:
    magnitude = scores.abs()
    return magnitude / magnitude.sum().clamp_min(1e-12)


def _nearest_tokens(classifier: TextClassifier, embeds: torch.Tensor, positions: list[int],
                    input_ids: list[int]) -> list[dict]:
    """The vocabulary token nearest (L2) to each perturbed embedding, where it is not the original token."""
    matrix = classifier.model.get_input_embeddings().weight.detach()
    special = torch.tensor(sorted(set(classifier.tokenizer.all_special_ids)), dtype=torch.long, device=matrix.device)
    distances = torch.cdist(embeds[0, positions].detach(), matrix)
    distances[:, special] = float("inf")  # a special token is never a reading of a word
    nearest = distances.argmin(dim=1).tolist()
    tokens = classifier.tokenizer.convert_ids_to_tokens(nearest)
    originals = classifier.tokenizer.convert_ids_to_tokens([input_ids[p] for p in positions])
    return [{"position": p, "token": o, "nearest": t} for p, o, t, i in zip(positions, originals, tokens, nearest)
            if i != input_ids[p]]


def attack(classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig | None = None,
           progress: Callable[[int, int, float], None] | None = None,
           should_stop: Callable[[], bool] | None = None) -> AttackResult:
    """Attack ``method``'s explanation of the predicted class on one input (see the module docstring)."""
    config = config or AttackConfig()
    # the double back-propagation needs the eager attention kernel: SDPA's CPU backward has no derivative itself
    with eager_attention(classifier.model):
        return _attack(classifier, encoding, method, config, progress, should_stop)


def _attack(classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig,
            progress: Callable[[int, int, float], None] | None,
            should_stop: Callable[[], bool] | None) -> AttackResult:
    if method not in ATTACKED_METHODS:
        raise AttackError(f"The attack needs a differentiable method; '{method}' is not one. Choose from: "
                          f"{', '.join(ATTACKED_METHODS)}.")
    positions = [i for i, special in enumerate(encoding.special) if not special]
    k = int(config.k_fraction * len(positions))
    if k < 1:
        raise AttackError(f"The input has {len(positions)} word tokens: k = {config.k_fraction:g} x that rounds to 0. "
                          f"Use a longer input or a larger top-k share (the thesis dropped such inputs).")
    started = time.perf_counter()
    forward, embeddings = embedding_function(classifier, encoding, "logit")
    baseline = baseline_embeddings(classifier, encoding, "pad") if method == "integrated_gradients" else None
    word_mask = torch.zeros_like(embeddings)
    word_mask[0, positions] = 1.0
    positions_t = torch.tensor(positions, device=embeddings.device)

    with torch.no_grad():
        clean_logits = forward(embeddings)[0]
    target = int(clean_logits.argmax())
    clean_scores, _, _ = differentiable_attribution(forward, embeddings.clone().requires_grad_(True), baseline,
                                                    target, method, config.ig_steps, False,
                                                    config.gradient_reduction)
    clean_scores = clean_scores.detach()[positions_t]
    clean_shares = _shares(clean_scores)
    top = torch.as_tensor(measures.top_k(clean_shares.cpu().numpy(), k), device=embeddings.device)
    clean_probability = torch.softmax(clean_logits, dim=-1)[target].detach()
    clean_match = clean_probability if config.match == "probability" else clean_logits[target].detach()

    generator = torch.Generator().manual_seed(config.seed)
    start = torch.rand(embeddings.shape, generator=generator) if config.start == "uniform" else \
        torch.zeros(embeddings.shape)
    delta = start.to(embeddings.device, embeddings.dtype).requires_grad_(True)
    optimizer = torch.optim.Adam([delta], lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=config.halve_every, gamma=0.5)

    best = None  # (objective, applied delta, attacked scores, class, probability)
    previous, quiet, stop_reason, step = None, 0, "step budget", 0
    for step in range(1, config.steps + 1):
        if should_stop is not None and should_stop():
            stop_reason = "stopped by the user"
            step -= 1
            break
        applied = delta.clamp(-config.epsilon, config.epsilon) * word_mask
        inputs = embeddings + applied
        scores, logits, attributed = differentiable_attribution(forward, inputs, baseline, target, method,
                                                                _loop_points(method, config), config.double_backprop,
                                                                config.gradient_reduction)
        shares = _shares(scores[positions_t])
        top_mass = shares[top].sum()
        probabilities = torch.softmax(logits, dim=-1)
        predicted = int(logits.argmax())
        if config.objective == "constrained":
            matched = probabilities[target] if config.match == "probability" else logits[target]
            objective = config.alpha * top_mass + config.beta * (clean_match - matched) ** 2
        else:
            objective = top_mass
        objective_value = float(objective.detach())
        eligible = config.objective == "constrained" or predicted == target
        if eligible and (best is None or objective_value < best[0]):
            best = (objective_value, applied.detach().clone(), scores.detach()[positions_t].clone(), predicted,
                    float(probabilities[target].detach()))
        loss = objective
        if not config.double_backprop:
            loss = loss + attributed  # the thesis code's explainer .backward() leaves this gradient in delta.grad
        optimizer.zero_grad()
        if loss.requires_grad:
            loss.backward()
        optimizer.step()
        schedule.step()
        if progress is not None:
            progress(step, config.steps, objective_value)
        current = delta.detach().clamp(-config.epsilon, config.epsilon) * word_mask
        if previous is not None and float((current - previous).abs().mean()) < config.tolerance:
            quiet += 1
            if quiet >= config.patience:
                stop_reason = "early stop"
                break
        else:
            quiet = 0
        previous = current

    if config.objective == "constrained" and config.constrained_pick == "last" and step > 0:
        applied = (delta.detach().clamp(-config.epsilon, config.epsilon) * word_mask)
        scores, logits, _ = differentiable_attribution(forward, (embeddings + applied).requires_grad_(True), baseline,
                                                       target, method, config.ig_steps, False,
                                                       config.gradient_reduction)
        best = (float("nan"), applied, scores.detach()[positions_t], int(logits.argmax()),
                float(torch.softmax(logits.detach(), dim=-1)[target]))
    if best is None:  # no iterate kept the class: the clean input, zero change (thesis code)
        best = (float("nan"), torch.zeros_like(embeddings), clean_scores, target, float(clean_probability))
    _, applied, attacked_scores, attacked_class, attacked_probability = best
    if _loop_points(method, config) != config.ig_steps and method == "integrated_gradients":
        # the loop attacked a coarser IG: the measures read the full IG of the returned iterate
        attacked_scores = differentiable_attribution(forward, (embeddings + applied).requires_grad_(True), baseline,
                                                     target, method, config.ig_steps, False,
                                                     config.gradient_reduction)[0].detach()[positions_t]
    return AttackResult(
        method=method, config=asdict(config), tokens=list(encoding.tokens), positions=positions, k=k,
        original_shares=clean_shares.cpu().numpy().astype(np.float64),
        attacked_shares=_shares(attacked_scores).cpu().numpy().astype(np.float64),
        original_scores=clean_scores.cpu().numpy().astype(np.float64),
        attacked_scores=attacked_scores.cpu().numpy().astype(np.float64),
        original_class=target, attacked_class=attacked_class, original_probability=float(clean_probability),
        attacked_probability=attacked_probability, steps_taken=step, stop_reason=stop_reason,
        delta_linf=float(applied.abs().max()), delta=applied[0, positions].cpu().numpy(),
        replaced_words=_nearest_tokens(classifier, embeddings + applied, positions, list(encoding.input_ids)),
        seconds=time.perf_counter() - started)
