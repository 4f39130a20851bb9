"""The attack on a document read in overlapping windows (``models/windows.py``): paper 003's attack (s. 2.3 and 4)
on the windowed classifier, never on a cut text.

One perturbation delta covers the document's word tokens (||delta||_inf <= epsilon, special tokens untouched). Each
window reads the document's perturbed embeddings at its own token positions (``window_positions``), so a token in
an overlap is perturbed alike in both windows. At every step:

- the **prediction** is the document's: the windows' logits under the document's rule (mean by default, max,
  first: ``aggregate_logits``, the rule the training path differentiates); the attack keeps its class (and, for the
  constrained objective, its probability or logit);
- the **explanation** is the windowed classifier's, the one the Heatmaps page shows: each window's attribution of
  the document's target class, blended over the overlaps with ``models.windows.blend``'s weights (each token takes
  its word's weight in that window; summed per word these are the page's blended word scores, the attributions'
  word aggregation being the sum). The top-k share is taken over the document's word tokens, as on one input;
- the objective is back-propagated through every window (double back-propagation per window).

Memory stays within the windows whose second-order graphs fit the memory model's double-backward budget
(``window_batch``). When all of the document's windows fit, the step is one pass, as on a single input: the windows
run chunk by chunk (``run_chunk``: one window per call on a CPU, where it measured faster than a padded batch of
512-token windows; the budget's windows per call on a GPU), their graphs kept, and one backward. Otherwise each step
runs two: the first computes the windows' scores and logits chunk by chunk without the second-order graph, the
objective's gradient with respect to those values is taken, and the second pass recomputes each chunk with its
graph and back-propagates that gradient into delta (the chain rule through the blend and the rule: the same
gradient, tested against the plain model window by window). delta, its Adam state and the scores grow with the
document's tokens, the activations do not.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from evaluation.adversarial.attribution import attribution_shares, batched_attribution
from evaluation.adversarial.config import AttackConfig, loop_points, passes
from evaluation.adversarial.optimization import InputState, start_values, word_positions_and_k
from explainers.contrast import contrast_columns
from explainers.embedding_forward import baseline_embeddings
from explainers.shared_passes import batches_inputs
from models import Encoding, TextClassifier, memory, metering
from models.document_training import aggregate_logits
from models.windows import DocumentEncoding, document_of, window_positions

# a document read in more windows than this is attacked only on an explicit opt-in (``allow_long``), after a cost
# estimate: at 512-token windows with a 25 % overlap, about 3,200 tokens, 2,500 words
MAX_ATTACK_WINDOWS = 8


@dataclass
class WindowPlan:
    """Each window's token positions in the document, its tokens' blend weights, masks, the chunks of windows run
    in one call (``batches``) and whether every window's graph is held at once (``one_pass``)."""

    positions: list[torch.Tensor]
    weights: list[torch.Tensor]   # the blend weight of each window token's word in this window; 0 at special tokens
    masks: list[torch.Tensor]
    types: list[torch.Tensor] | None
    batches: list[list[int]]
    one_pass: bool


def window_batch(classifier: TextClassifier, document: DocumentEncoding, points: int) -> int:
    """Windows per batch: the memory model's double-backward token budget over (path points x window tokens); one
    window for a model whose padding moves the position its head reads."""
    if not batches_inputs(classifier):
        return 1
    budget = min(classifier.max_batch_tokens, memory.budget_tokens(classifier.memory_shape, classifier.device,
                                                                   document.window_size, "double_backward"))
    return max(1, budget // (points * document.window_size))


def run_chunk(classifier: TextClassifier, held: int) -> int:
    """Windows per forward call: 1 on a CPU (measured: a padded batch of two 512-token windows took 1.1-1.7x the time
    of the two windows one after another, docs/benchmarks.md), else every window held at once."""
    return 1 if torch.device(classifier.device).type == "cpu" else held


def window_plan(classifier: TextClassifier, document: DocumentEncoding, per_batch: int, one_pass: bool
                ) -> WindowPlan:
    device, dtype = classifier.device, classifier.model.get_input_embeddings().weight.dtype
    positions, weights, masks, types = [], [], [], []
    for window, blend_weight in zip(document.windows, document.blend):
        order = window_positions(document, window)
        words = document.token_word_array[order]
        weight = torch.zeros(len(order), dtype=dtype, device=device)
        inside = words >= 0
        weight[torch.as_tensor(inside)] = torch.as_tensor(blend_weight[words[inside] - window.words.start],
                                                          dtype=dtype, device=device)
        positions.append(torch.as_tensor(order, device=device))
        weights.append(weight)
        tensors = classifier.tensors(window.encoding)
        masks.append(tensors["attention_mask"][0])
        types.append(tensors.get("token_type_ids"))
    batches = [list(range(start, min(start + per_batch, len(positions))))
               for start in range(0, len(positions), per_batch)]
    kept_types = [t[0] for t in types if t is not None] if all(t is not None for t in types) else None
    return WindowPlan(positions, weights, masks, kept_types, batches, one_pass)


def _pad(rows: list[torch.Tensor], width: int) -> torch.Tensor:
    """Rows (length, ...) padded with zeros to ``width`` and stacked."""
    return torch.stack([torch.nn.functional.pad(r, (0, 0) * (r.dim() - 1) + (0, width - r.shape[0])) for r in rows])


def batch_scores(classifier: TextClassifier, plan: WindowPlan, batch: list[int], embeds: torch.Tensor,
                 baseline: torch.Tensor | None, target: int, method: str, points: int, create_graph: bool,
                 reduction: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(the batch's blended contribution to the document's token scores (T,), the windows' logits (B, C), their
    attributed outputs summed) for the document's embeddings ``embeds`` (1, T, H)."""
    width = max(len(plan.positions[w]) for w in batch)
    x = _pad([embeds[0, plan.positions[w]] for w in batch], width)
    # padded positions: x = baseline = 0, so they add nothing to IG; the mask hides them from the model
    base = None if baseline is None else _pad([baseline[0, plan.positions[w]] for w in batch], width)
    mask = _pad([plan.masks[w] for w in batch], width)
    types = None if plan.types is None else _pad([plan.types[w] for w in batch], width)

    def forward(inputs_embeds: torch.Tensor) -> torch.Tensor:
        repeat = inputs_embeds.shape[0] // len(batch)  # IG: each window's path points, grouped by window
        return contrast_columns(classifier.forward_embeds(inputs_embeds, mask.repeat_interleave(repeat, 0),
                                                          None if types is None else types.repeat_interleave(repeat, 0)))

    targets = torch.full((len(batch),), target, device=x.device)
    scores, logits, attributed = batched_attribution(forward, x, base, targets, method, points, create_graph,
                                                     reduction)
    blended = torch.zeros(embeds.shape[1], dtype=scores.dtype, device=scores.device)
    for row, w in enumerate(batch):
        n = len(plan.positions[w])
        blended = blended.index_add(0, plan.positions[w], plan.weights[w] * scores[row, :n])
    return blended, logits, attributed


def document_values(classifier: TextClassifier, plan: WindowPlan, embeds: torch.Tensor, baseline, target: int,
                    method: str, points: int, reduction: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(the document's blended token scores (T,), every window's logits (W, C), attributed outputs summed), batch
    by batch, detached: values only (first-order gradients, no graph kept past a batch)."""
    scores, logits, attributed = None, [], torch.zeros(())
    for batch in plan.batches:
        x = embeds.detach().requires_grad_(True)
        part, batch_logits, batch_attributed = batch_scores(classifier, plan, batch, x, baseline, target, method,
                                                            points, False, reduction)
        scores = part.detach() if scores is None else scores + part.detach()
        logits.append(batch_logits.detach())
        attributed = attributed + batch_attributed.detach()
    assert scores is not None  # a document has at least one window
    return scores, torch.cat(logits), attributed


@dataclass
class DocumentState(InputState):
    """One document's attack: ``InputState``'s bookkeeping over the document's tokens, read through its windows."""

    classifier: TextClassifier | None = None
    document: DocumentEncoding | None = None
    plan: WindowPlan | None = None
    extra: dict = field(default_factory=dict)

    @classmethod
    def prepare_document(cls, classifier: TextClassifier, document: DocumentEncoding, method: str,
                         config: AttackConfig, index: int, per_batch: int | None = None,
                         one_pass: bool | None = None) -> DocumentState:
        """``per_batch`` (windows per call) and ``one_pass`` (every window's graph held) default to the memory
        model's budget and ``run_chunk``."""
        positions, k = word_positions_and_k(document, config, "document", "a larger top-k share")
        started = time.perf_counter()
        held = window_batch(classifier, document, loop_points(method, config))
        plan = window_plan(classifier, document, per_batch or run_chunk(classifier, held),
                           len(document.windows) <= held if one_pass is None else one_pass)
        ids = torch.tensor([document.input_ids], device=classifier.device)
        embeddings = classifier.word_embeddings(ids).detach()
        baseline = baseline_embeddings(classifier, document, "pad") if method == "integrated_gradients" else None
        word_mask = torch.zeros_like(embeddings)
        word_mask[0, positions] = 1.0
        positions_t = torch.tensor(positions, device=embeddings.device)
        with torch.no_grad():
            window_logits = torch.cat([batch_scores_logits(classifier, plan, batch, embeddings)
                                       for batch in plan.batches])
        clean_logits = aggregate_logits(window_logits, document.aggregate)
        target = int(clean_logits.argmax())
        scores, _, _ = document_values(classifier, plan, embeddings, baseline, target, method, config.ig_steps,
                                       config.gradient_reduction)
        clean_scores = scores[positions_t]
        clean_shares, top, clean_probability, clean_match, delta = start_values(clean_logits, target, clean_scores,
                                                                                 k, config, embeddings)
        return cls(index, document, None, embeddings, baseline, word_mask, positions, positions_t, k, target,
                   clean_scores, clean_shares, top, clean_probability, clean_match, delta, started,
                   classifier=classifier, document=document, plan=plan)

    def explain(self, applied: torch.Tensor, method: str, config: AttackConfig, ig_steps: int
                ) -> tuple[torch.Tensor, torch.Tensor]:
        assert self.classifier is not None and self.plan is not None and self.document is not None
        scores, window_logits, _ = document_values(self.classifier, self.plan, self.embeddings + applied,
                                                   self.baseline, self.target, method, ig_steps,
                                                   config.gradient_reduction)
        return scores[self.positions_t], aggregate_logits(window_logits, self.document.aggregate)

    def windows_record(self) -> dict | None:
        assert self.document is not None and self.plan is not None
        return {**self.document.describe(), "window_calls": len(self.plan.batches), "one_pass": self.plan.one_pass,
                "attacked": "the document's prediction under its rule; the windows' attributions blended"}

    def objective(self, scores: torch.Tensor, window_logits: torch.Tensor, config: AttackConfig
                  ) -> tuple[torch.Tensor, torch.Tensor]:
        """(the attack's objective, the document's logits) from the document's token scores and its windows'
        logits: attack.py's objectives on the document classifier."""
        assert self.document is not None
        logits = aggregate_logits(window_logits, self.document.aggregate)
        top_mass = attribution_shares(scores[self.positions_t])[self.top].sum()
        if config.objective != "constrained":
            return top_mass, logits
        matched = torch.softmax(logits, dim=-1)[self.target] if config.match == "probability" else logits[self.target]
        return config.alpha * top_mass + config.beta * (self.clean_match - matched) ** 2, logits

    def gradient_step(self, method: str, config: AttackConfig, points: int
                      ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Leaves the objective's gradient in ``delta.grad``; returns (objective, document logits, token scores),
        detached. One pass or two (the module docstring)."""
        assert self.classifier is not None and self.plan is not None
        classifier, plan = self.classifier, self.plan
        if plan.one_pass:
            x = self.embeddings + self.applied(config.epsilon)
            parts = [batch_scores(classifier, plan, batch, x, self.baseline, self.target, method, points,
                                  config.double_backprop, config.gradient_reduction) for batch in plan.batches]
            scores = parts[0][0] if len(parts) == 1 else torch.stack([p[0] for p in parts]).sum(dim=0)
            window_logits = torch.cat([p[1] for p in parts])
            attributed = torch.stack([p[2] for p in parts]).sum()
            objective, logits = self.objective(scores, window_logits, config)
            # the thesis code's explainer .backward() leaves the attributed output's gradient in delta.grad
            loss = objective if config.double_backprop else objective + attributed
            if loss.requires_grad:
                loss.backward()
            return objective.detach(), logits.detach(), scores.detach()
        values, window_values, _ = document_values(classifier, plan, self.embeddings + self.applied(config.epsilon),
                                                   self.baseline, self.target, method, points,
                                                   config.gradient_reduction)
        values.requires_grad_(True)
        window_values.requires_grad_(True)
        objective, logits = self.objective(values, window_values, config)
        d_scores, d_logits = torch.autograd.grad(objective, (values, window_values), allow_unused=True)
        first = 0
        for batch in plan.batches:
            x = self.embeddings + self.applied(config.epsilon)
            scores, window_logits, attributed = batch_scores(classifier, plan, batch, x, self.baseline, self.target,
                                                             method, points, config.double_backprop,
                                                             config.gradient_reduction)
            surrogate = (d_scores * scores).sum()
            if d_logits is not None:
                surrogate = surrogate + (d_logits[first:first + len(batch)] * window_logits).sum()
            if not config.double_backprop:
                surrogate = surrogate + attributed
            first += len(batch)
            if surrogate.requires_grad:
                surrogate.backward()
        return objective.detach(), logits.detach(), values.detach()


def batch_scores_logits(classifier: TextClassifier, plan: WindowPlan, batch: list[int],
                        embeds: torch.Tensor) -> torch.Tensor:
    """The windows' logits of one batch (no attribution)."""
    width = max(len(plan.positions[w]) for w in batch)
    x = _pad([embeds[0, plan.positions[w]] for w in batch], width)
    mask = _pad([plan.masks[w] for w in batch], width)
    types = None if plan.types is None else _pad([plan.types[w] for w in batch], width)
    return contrast_columns(classifier.forward_embeds(x, mask, types))


def optimize_document(state: DocumentState, method: str, config: AttackConfig,
                      progress: Callable[[int, int, float], None] | None,
                      should_stop: Callable[[], bool] | None) -> DocumentState:
    """The optimization loop of one document (``optimization.optimize``'s, one input)."""
    optimizer = torch.optim.Adam([state.delta], lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=config.halve_every, gamma=0.5)
    points = loop_points(method, config)
    for step in range(1, config.steps + 1):
        if should_stop is not None and should_stop():
            state.stop_reason, state.steps_taken = "stopped by the user", step - 1
            break
        optimizer.zero_grad()
        applied = state.applied(config.epsilon).detach()
        objective, logits, scores = state.gradient_step(method, config, points)
        probabilities = torch.softmax(logits, dim=-1)
        predicted = int(logits.argmax())
        eligible = config.objective == "constrained" or predicted == state.target
        state.keep_if_best(float(objective), eligible, applied, scores[state.positions_t], predicted,
                           float(probabilities[state.target]))
        optimizer.step()
        schedule.step()
        if progress is not None:
            progress(step, config.steps, float(objective))
        if state.settled(step, config):
            break
    return state


def document_passes(document: DocumentEncoding, method: str, config: AttackConfig, held: int
                    ) -> tuple[int, int]:
    """(forward, backward) window passes of a full attack on a document: the single input's per window, plus the
    values pass (a forward and a backward per path point) when more windows than ``held`` (their graphs at once)."""
    forward, backward = passes(method, config)
    windows = len(document.windows)
    if windows > held:
        values = config.steps * loop_points(method, config)
        forward, backward = forward + values, backward + values
    return forward * windows, backward * windows


def attack_seconds(classifier: TextClassifier, encoding: Encoding, method: str, config: AttackConfig) -> float:
    """The cost model's estimate of the whole step budget on one input or a document read in windows."""
    document = document_of(encoding)
    if document is None:
        forward, backward = passes(method, config)
        return metering.estimate_seconds(classifier, forward, backward, encoding.n_tokens)
    held = window_batch(classifier, document, loop_points(method, config))
    forward, backward = document_passes(document, method, config, held)
    return metering.estimate_seconds(classifier, forward, backward, document.window_size)
