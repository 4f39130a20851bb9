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
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np
import torch

from evaluation.adversarial import measures
from evaluation.adversarial.long_inputs import long_input_refusal
from explainers.embedding_forward import baseline_embeddings, embedding_function
from explainers.params import ParamError, coerce, param
from explainers.shared_passes import batches_inputs
from models import Encoding, ModelError, TextClassifier, memory, metering
from models.attention_kernel import eager_attention

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
    targets = torch.tensor([target], device=embeds.device)
    scores, logits, attributed = batched_attribution(forward, embeds, baseline, targets, method, ig_steps,
                                                     create_graph, gradient_reduction)
    return scores[0], logits[0], attributed


def batched_attribution(forward, embeds: torch.Tensor, baseline: torch.Tensor | None, targets: torch.Tensor,
                        method: str, ig_steps: int, create_graph: bool, gradient_reduction: str = "l2"
                        ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``differentiable_attribution`` of B inputs at once, (B, T, H) padded: (scores (B, T), logits (B, C), the
    attributed outputs summed). Each input's scores depend on its own row only (rows never mix in the model), so
    the gradient of the sum is each row's own gradient. ``forward`` takes (B * points, T, H), rows grouped by
    input; for IG every input's path points go through in one batch."""
    rows = torch.arange(embeds.shape[0], device=embeds.device)
    if method == "integrated_gradients":
        # right Riemann sum alpha = 1/n ... 1 (the thesis code's DiffIntegratedGradients); the last point is the input
        alphas = torch.arange(1, ig_steps + 1, dtype=embeds.dtype, device=embeds.device) / ig_steps
        path = baseline[:, None] + alphas[None, :, None, None] * (embeds - baseline)[:, None]  # (B, n, T, H)
        logits = forward(path.flatten(0, 1)).unflatten(0, (embeds.shape[0], ig_steps))
        attributed = logits[rows, :, targets].sum()
        gradient = torch.autograd.grad(attributed, path, create_graph=create_graph, retain_graph=True)[0]
        scores = ((embeds - baseline) * gradient.mean(dim=1)).sum(dim=-1)
        return scores, logits[:, -1], attributed
    logits = forward(embeds)
    attributed = logits[rows, targets].sum()
    gradient = torch.autograd.grad(attributed, embeds, create_graph=create_graph, retain_graph=True)[0]
    if method == "input_x_gradient":
        scores = (gradient * embeds).sum(dim=-1)
    else:
        scores = gradient.norm(dim=-1) if gradient_reduction == "l2" else gradient.sum(dim=-1)
    return scores, logits, attributed


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
    result = attack_many(classifier, [encoding], method, config, progress, should_stop)[0]
    if isinstance(result, AttackError):
        raise result
    return result


# What one more batch costs per optimization step, in padded tokens: measured on the default model (2 threads, the
# shared machine, Gradient x Input, 16 SST-2 dev sentences): a step costs about 0.14 CPU s per batch + 2.9 ms per
# padded token (one group of 16 padded to 39 tokens: 13.5 CPU s for 10 steps; groups of 9, 5, 2: 10.6 s;
# of 5, 4, 3, 2, 2: 12.3 s), so a batch is worth about 48 padded tokens
BATCH_OVERHEAD_TOKENS = 48


def attack_groups(classifier: TextClassifier, encodings: Sequence[Encoding], rows_per_input: int) -> list[list[int]]:
    """Indices of ``encodings`` in the batches ``attack_many`` optimizes together: sorted by length, then cut
    into the runs of neighbours that cost least per step (padded tokens x rows + ``BATCH_OVERHEAD_TOKENS`` per
    batch: fewer batches against less padding), each within the model's token budget (``max_batch_tokens``: rows x
    padded width, each input taking ``rows_per_input`` rows, IG's path points) unless it holds one input. A model
    whose padding moves the position its head reads (decoders, encoder-decoders) attacks one input per batch."""
    order = sorted(range(len(encodings)), key=lambda i: encodings[i].n_tokens)
    if not batches_inputs(classifier):
        return [[i] for i in order]
    longest = max((e.n_tokens for e in encodings), default=1)
    # the token budget: max_batch_tokens, within what the memory model gives a double backward (models/memory.py)
    budget = min(classifier.max_batch_tokens,
                 memory.budget_tokens(classifier.memory_shape, classifier.device, longest, "double_backward"))
    # cheapest[j]: the least cost of the first j inputs in order, cut[j]: where its last batch starts
    cheapest, cut = [0.0] + [float("inf")] * len(order), [0] * (len(order) + 1)
    for end in range(1, len(order) + 1):
        width = encodings[order[end - 1]].n_tokens  # the longest of any batch ending here: sorted
        for start in range(end - 1, -1, -1):
            tokens = (end - start) * rows_per_input * width
            if end - start > 1 and tokens > budget:
                break
            cost = cheapest[start] + BATCH_OVERHEAD_TOKENS + tokens
            if cost < cheapest[end]:
                cheapest[end], cut[end] = cost, start
    groups, end = [], len(order)
    while end > 0:
        groups.insert(0, order[cut[end]:end])
        end = cut[end]
    return groups


def rows_per_input(method: str, config: AttackConfig) -> int:
    """Rows one input takes in an optimization step's batch: IG's loop path points, else 1."""
    return _loop_points(method, config)


def attack_many(classifier: TextClassifier, encodings: Sequence[Encoding], method: str,
                config: AttackConfig | None = None, progress: Callable[[int, int, float], None] | None = None,
                should_stop: Callable[[], bool] | None = None) -> list[AttackResult | AttackError]:
    """``attack`` of every input, in input order, with the inputs of each ``attack_groups`` batch optimized as one:
    their deltas padded into one batch (attention mask), one forward, backward and double backward per step for
    all of them, the summed loss (the deltas are independent: each gets its own gradient), Adam per element (one
    parameter per input: identical to separate optimizers) under the same schedule, and each input's own early
    stop, best iterate and class check; a finished input leaves the batch. Equal to ``attack`` per input up to
    float32 reordering. An input too short to attack gets its ``AttackError`` in its place.
    ``progress(step, steps, mean objective)`` and ``should_stop`` act on the batch running."""
    config = config or AttackConfig()
    if method not in ATTACKED_METHODS:
        raise AttackError(f"The attack needs a differentiable method; '{method}' is not one. Choose from: "
                          f"{', '.join(ATTACKED_METHODS)}.")
    results: list[AttackResult | AttackError | None] = [None] * len(encodings)
    # the double back-propagation needs the eager attention kernel: SDPA's CPU backward has no derivative itself
    with eager_attention(classifier.model):
        for group in attack_groups(classifier, encodings, rows_per_input(method, config)):
            _attack_group(classifier, encodings, group, method, config, progress, should_stop, results)
    return results


def _attack_group(classifier: TextClassifier, encodings: Sequence[Encoding], group: list[int], method: str,
                  config: AttackConfig, progress, should_stop, results: list) -> None:
    """One batch of ``attack_many``. Out of memory (models/memory.py): the inputs not finished yet start again
    in two halves (finished ones keep their results) and the limit is remembered for the process."""
    inputs = []
    for index in group:
        refusal = long_input_refusal(classifier, encodings[index])  # never a silent cut
        if refusal:
            results[index] = AttackError(refusal)
            continue
        try:
            inputs.append(_Input.prepare(classifier, encodings[index], method, config, index))
        except AttackError as error:
            results[index] = error
    pending = [state.index for state in inputs]
    try:
        for state in _optimize(classifier, inputs, method, config, progress, should_stop):
            results[state.index] = state.result(classifier, method, config)
            pending.remove(state.index)
    except Exception as error:  # noqa: BLE001  (only out-of-memory errors are handled; the rest re-raised)
        if len(pending) <= 1 or not memory.is_out_of_memory(error):
            raise
        width = max(encodings[i].n_tokens for i in pending)
        memory.remember_failure(classifier.memory_shape, classifier.device, "double_backward",
                                len(pending) * rows_per_input(method, config) * width, error)
        half = len(pending) // 2
        for part in (pending[:half], pending[half:]):
            _attack_group(classifier, encodings, part, method, config, progress, should_stop, results)


@dataclass
class _Input:
    """One input's attack: its clean explanation, its delta (an Adam parameter of its own) and its bookkeeping."""

    index: int
    encoding: Encoding
    forward: Callable
    embeddings: torch.Tensor          # (1, T, H)
    baseline: torch.Tensor | None
    word_mask: torch.Tensor           # (1, T, H): 1 at the word tokens
    positions: list[int]
    positions_t: torch.Tensor
    k: int
    target: int
    clean_scores: torch.Tensor
    clean_shares: torch.Tensor
    top: torch.Tensor
    clean_probability: torch.Tensor
    clean_match: torch.Tensor
    delta: torch.Tensor
    started: float
    best: tuple | None = None  # (objective, applied delta, attacked scores, class, probability)
    previous: torch.Tensor | None = None
    quiet: int = 0
    steps_taken: int = 0
    stop_reason: str = "step budget"

    @classmethod
    def prepare(cls, classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig,
                index: int) -> _Input:
        positions = [i for i, special in enumerate(encoding.special) if not special]
        k = int(config.k_fraction * len(positions))
        if k < 1:
            raise AttackError(f"The input has {len(positions)} word tokens: k = {config.k_fraction:g} x that rounds "
                              f"to 0. Use a longer input or a larger top-k share (the thesis dropped such inputs).")
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
        return cls(index, encoding, forward, embeddings, baseline, word_mask, positions, positions_t, k, target,
                   clean_scores, clean_shares, top, clean_probability, clean_match, delta, started)

    def applied(self, epsilon: float) -> torch.Tensor:
        return self.delta.clamp(-epsilon, epsilon) * self.word_mask

    def result(self, classifier: TextClassifier, method: str, config: AttackConfig) -> AttackResult:
        """The returned iterate (see the module docstring) and its measures."""
        embeddings, baseline, positions_t = self.embeddings, self.baseline, self.positions_t
        best = self.best
        if config.objective == "constrained" and config.constrained_pick == "last" and self.steps_taken > 0:
            applied = self.applied(config.epsilon).detach()
            scores, logits, _ = differentiable_attribution(self.forward, (embeddings + applied).requires_grad_(True),
                                                           baseline, self.target, method, config.ig_steps, False,
                                                           config.gradient_reduction)
            best = (float("nan"), applied, scores.detach()[positions_t], int(logits.argmax()),
                    float(torch.softmax(logits.detach(), dim=-1)[self.target]))
        if best is None:  # no iterate kept the class: the clean input, zero change (thesis code)
            best = (float("nan"), torch.zeros_like(embeddings), self.clean_scores, self.target,
                    float(self.clean_probability))
        _, applied, attacked_scores, attacked_class, attacked_probability = best
        if _loop_points(method, config) != config.ig_steps and method == "integrated_gradients":
            # the loop attacked a coarser IG: the measures read the full IG of the returned iterate
            attacked_scores = differentiable_attribution(self.forward, (embeddings + applied).requires_grad_(True),
                                                         baseline, self.target, method, config.ig_steps, False,
                                                         config.gradient_reduction)[0].detach()[positions_t]
        encoding, positions = self.encoding, self.positions
        return AttackResult(
            method=method, config=asdict(config), tokens=list(encoding.tokens), positions=positions, k=self.k,
            original_shares=self.clean_shares.cpu().numpy().astype(np.float64),
            attacked_shares=_shares(attacked_scores).cpu().numpy().astype(np.float64),
            original_scores=self.clean_scores.cpu().numpy().astype(np.float64),
            attacked_scores=attacked_scores.cpu().numpy().astype(np.float64),
            original_class=self.target, attacked_class=attacked_class,
            original_probability=float(self.clean_probability), attacked_probability=attacked_probability,
            steps_taken=self.steps_taken, stop_reason=self.stop_reason, delta_linf=float(applied.abs().max()),
            delta=applied[0, positions].cpu().numpy(),
            replaced_words=_nearest_tokens(classifier, embeddings + applied, positions, list(encoding.input_ids)),
            seconds=time.perf_counter() - self.started)  # batched: the batch's time up to this result


class _Batch:
    """The padded tensors of a group of inputs; ``rows(active)`` cuts the active inputs at their longest."""

    def __init__(self, classifier: TextClassifier, inputs: list[_Input]):
        self.classifier = classifier
        width = max(s.encoding.n_tokens for s in inputs)
        self.position = {s.index: row for row, s in enumerate(inputs)}
        tensors = [classifier.tensors(s.encoding) for s in inputs]
        pad = lambda t, value: torch.nn.functional.pad(t, (0, width - t.shape[1]), value=value)  # noqa: E731
        self.mask = torch.cat([pad(t["attention_mask"], 0) for t in tensors])
        self.types = torch.cat([pad(t["token_type_ids"], 0) for t in tensors]) \
            if all("token_type_ids" in t for t in tensors) else None
        pad_rows = lambda x: torch.nn.functional.pad(x, (0, 0, 0, width - x.shape[1]))  # noqa: E731
        self.embeddings = torch.cat([pad_rows(s.embeddings) for s in inputs])
        # a padded position's baseline is its own embedding: x - b = 0 there, so it adds nothing to IG
        self.baseline = None if inputs[0].baseline is None else torch.cat(
            [torch.cat([s.baseline, self.embeddings[row:row + 1, s.encoding.n_tokens:]], dim=1)
             for row, s in enumerate(inputs)])

    def forward_of(self, active: list[_Input]):
        """(forward, embeddings, baseline) of the active inputs, padded to the longest of them."""
        rows = torch.tensor([self.position[s.index] for s in active], device=self.embeddings.device)
        width = max(s.encoding.n_tokens for s in active)
        mask = self.mask[rows, :width]
        types = None if self.types is None else self.types[rows, :width]

        def forward(inputs_embeds: torch.Tensor) -> torch.Tensor:
            repeat = inputs_embeds.shape[0] // len(active)  # IG: each input's path points, grouped by input
            return self.classifier.forward_embeds(inputs_embeds, mask.repeat_interleave(repeat, 0),
                                                  None if types is None else types.repeat_interleave(repeat, 0))

        baseline = None if self.baseline is None else self.baseline[rows, :width]
        return forward, self.embeddings[rows, :width], baseline


def _optimize(classifier: TextClassifier, inputs: list[_Input], method: str, config: AttackConfig,
              progress, should_stop) -> list[_Input]:
    """The optimization loop of a group (see ``attack_many``); fills each input's best iterate and stop."""
    if not inputs:
        return inputs
    batch = _Batch(classifier, inputs)
    optimizer = torch.optim.Adam([s.delta for s in inputs], lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=config.halve_every, gamma=0.5)
    active = list(inputs)
    points = _loop_points(method, config)
    for step in range(1, config.steps + 1):
        if should_stop is not None and should_stop():
            for state in active:
                state.stop_reason, state.steps_taken = "stopped by the user", step - 1
            active = []
            break
        forward, embeddings, baseline = batch.forward_of(active)
        width = embeddings.shape[1]
        applied = torch.cat([torch.nn.functional.pad(s.applied(config.epsilon), (0, 0, 0, width - s.encoding.n_tokens))
                             for s in active])
        targets = torch.tensor([s.target for s in active], device=embeddings.device)
        scores, logits, attributed = batched_attribution(forward, embeddings + applied, baseline, targets, method,
                                                         points, config.double_backprop, config.gradient_reduction)
        objectives = []
        for row, state in enumerate(active):
            shares = _shares(scores[row, state.positions_t])
            top_mass = shares[state.top].sum()
            probabilities = torch.softmax(logits[row], dim=-1)
            predicted = int(logits[row].argmax())
            if config.objective == "constrained":
                matched = probabilities[state.target] if config.match == "probability" else logits[row, state.target]
                objective = config.alpha * top_mass + config.beta * (state.clean_match - matched) ** 2
            else:
                objective = top_mass
            objectives.append(objective)
            value = float(objective.detach())
            eligible = config.objective == "constrained" or predicted == state.target
            if eligible and (state.best is None or value < state.best[0]):
                state.best = (value, applied[row:row + 1, :state.encoding.n_tokens].detach().clone(),
                              scores.detach()[row, state.positions_t].clone(), predicted,
                              float(probabilities[state.target].detach()))
        loss = torch.stack(objectives).sum()
        if not config.double_backprop:
            loss = loss + attributed  # the thesis code's explainer .backward() leaves this gradient in delta.grad
        optimizer.zero_grad()  # a finished input's gradient stays None: Adam leaves it alone
        if loss.requires_grad:
            loss.backward()
        optimizer.step()
        schedule.step()
        if progress is not None:
            progress(step, config.steps, float(torch.stack(objectives).detach().mean()))
        still = []
        for state in active:
            state.steps_taken = step
            current = state.applied(config.epsilon).detach()
            if state.previous is not None and float((current - state.previous).abs().mean()) < config.tolerance:
                state.quiet += 1
                if state.quiet >= config.patience:
                    state.stop_reason = "early stop"
                    continue
            else:
                state.quiet = 0
            state.previous = current
            still.append(state)
        active = still
        if not active:
            break
    return inputs
