"""The attack's optimization: each input's state (its clean explanation, its delta as an Adam parameter, its best
iterate and early stop), the padded batch of a group of inputs, and the loop that optimizes a group as one."""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch

from evaluation.adversarial import measures
from evaluation.adversarial.attribution import attribution_shares, batched_attribution, differentiable_attribution
from evaluation.adversarial.config import AttackConfig, loop_points
from evaluation.adversarial.result import AttackError, AttackResult
from explainers.embedding_forward import baseline_embeddings, embedding_function
from models import Encoding, TextClassifier


def nearest_tokens(classifier: TextClassifier, embeds: torch.Tensor, positions: list[int],
                   input_ids: list[int]) -> list[dict]:
    """The vocabulary token nearest (L2) to each perturbed embedding, where it is not the original token."""
    matrix = classifier.model.get_input_embeddings().weight.detach()
    special = torch.tensor(sorted(set(classifier.tokenizer.all_special_ids)), dtype=torch.long, device=matrix.device)
    nearest: list[int] = []
    for start in range(0, len(positions), 256):  # a document's words in chunks: the distances stay a small matrix
        distances = torch.cdist(embeds[0, positions[start:start + 256]].detach(), matrix)
        distances[:, special] = float("inf")  # a special token is never a reading of a word
        nearest += distances.argmin(dim=1).tolist()
    tokens = classifier.tokenizer.convert_ids_to_tokens(nearest)
    originals = classifier.tokenizer.convert_ids_to_tokens([input_ids[p] for p in positions])
    return [{"position": p, "token": o, "nearest": t} for p, o, t, i in zip(positions, originals, tokens, nearest)
            if i != input_ids[p]]


def word_positions_and_k(encoding, config: AttackConfig, what: str, remedy: str) -> tuple[list[int], int]:
    """The word tokens' positions (special tokens never move) and k, the top-k size the attack moves mass out of;
    an input whose k rounds to 0 is refused with ``remedy``."""
    positions = [i for i, special in enumerate(encoding.special) if not special]
    k = int(config.k_fraction * len(positions))
    if k < 1:
        raise AttackError(f"The {what} has {len(positions)} word tokens: k = {config.k_fraction:g} x that rounds to 0. "
                          f"Use {remedy}.")
    return positions, k


def start_values(clean_logits: torch.Tensor, target: int, clean_scores: torch.Tensor, k: int, config: AttackConfig,
                 embeddings: torch.Tensor) -> tuple:
    """What an input's and a document's attack share after the clean pass: the clean attribution shares, their top
    k, the kept class's probability and the value the match term holds (probability or logit), and the seeded
    start of the perturbation."""
    clean_shares = attribution_shares(clean_scores)
    top = torch.as_tensor(measures.top_k(clean_shares.cpu().numpy(), k), device=embeddings.device)
    clean_probability = torch.softmax(clean_logits, dim=-1)[target].detach()
    clean_match = clean_probability if config.match == "probability" else clean_logits[target].detach()
    generator = torch.Generator().manual_seed(config.seed)
    start = torch.rand(embeddings.shape, generator=generator) if config.start == "uniform" else \
        torch.zeros(embeddings.shape)
    delta = start.to(embeddings.device, embeddings.dtype).requires_grad_(True)
    return clean_shares, top, clean_probability, clean_match, delta


@dataclass
class InputState:
    """One input's attack: its clean explanation, its delta (an Adam parameter of its own) and its bookkeeping."""

    index: int
    encoding: Encoding
    forward: Callable | None         # None for a document: it is read through its windows (documents.py)
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
                index: int) -> InputState:
        positions, k = word_positions_and_k(encoding, config, "input", "a longer input or a larger top-k share (the "
                                                                         "thesis dropped such inputs)")
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
        clean_shares, top, clean_probability, clean_match, delta = start_values(clean_logits, target, clean_scores,
                                                                                 k, config, embeddings)
        return cls(index, encoding, forward, embeddings, baseline, word_mask, positions, positions_t, k, target,
                   clean_scores, clean_shares, top, clean_probability, clean_match, delta, started)

    def applied(self, epsilon: float) -> torch.Tensor:
        return self.delta.clamp(-epsilon, epsilon) * self.word_mask

    def explain(self, applied: torch.Tensor, method: str, config: AttackConfig, ig_steps: int
                ) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores at the word tokens, logits) of the input moved by ``applied``, outside the optimization."""
        assert self.forward is not None  # set by ``prepare``
        scores, logits, _ = differentiable_attribution(self.forward, (self.embeddings + applied).requires_grad_(True),
                                                       self.baseline, self.target, method, ig_steps, False,
                                                       config.gradient_reduction)
        return scores.detach()[self.positions_t], logits.detach()

    def keep_if_best(self, value: float, eligible: bool, applied: torch.Tensor, scores: torch.Tensor, predicted: int,
                     probability: float) -> None:
        """Remember this iterate when it is eligible (see attack.py) and the best objective so far."""
        if eligible and (self.best is None or value < self.best[0]):
            self.best = (value, applied.detach().clone(), scores.detach().clone(), predicted, probability)

    def settled(self, step: int, config: AttackConfig) -> bool:
        """After ``step``: True when delta stopped moving (the early stop), else False (it stays active)."""
        self.steps_taken = step
        current = self.applied(config.epsilon).detach()
        if self.previous is not None and float((current - self.previous).abs().mean()) < config.tolerance:
            self.quiet += 1
            if self.quiet >= config.patience:
                self.stop_reason = "early stop"
                return True
        else:
            self.quiet = 0
        self.previous = current
        return False

    def result(self, classifier: TextClassifier, method: str, config: AttackConfig) -> AttackResult:
        """The returned iterate (see attack.py's docstring) and its measures."""
        embeddings = self.embeddings
        best = self.best
        if config.objective == "constrained" and config.constrained_pick == "last" and self.steps_taken > 0:
            applied = self.applied(config.epsilon).detach()
            scores, logits = self.explain(applied, method, config, config.ig_steps)
            best = (float("nan"), applied, scores, int(logits.argmax()),
                    float(torch.softmax(logits, dim=-1)[self.target]))
        if best is None:  # no iterate kept the class: the clean input, zero change (thesis code)
            best = (float("nan"), torch.zeros_like(embeddings), self.clean_scores, self.target,
                    float(self.clean_probability))
        _, applied, attacked_scores, attacked_class, attacked_probability = best
        if loop_points(method, config) != config.ig_steps and method == "integrated_gradients":
            # the loop attacked a coarser IG: the measures read the full IG of the returned iterate
            attacked_scores = self.explain(applied, method, config, config.ig_steps)[0]
        encoding, positions = self.encoding, self.positions
        return AttackResult(
            method=method, config=asdict(config), tokens=list(encoding.tokens), positions=positions, k=self.k,
            original_shares=self.clean_shares.cpu().numpy().astype(np.float64),
            attacked_shares=attribution_shares(attacked_scores).cpu().numpy().astype(np.float64),
            original_scores=self.clean_scores.cpu().numpy().astype(np.float64),
            attacked_scores=attacked_scores.cpu().numpy().astype(np.float64),
            original_class=self.target, attacked_class=attacked_class,
            original_probability=float(self.clean_probability), attacked_probability=attacked_probability,
            steps_taken=self.steps_taken, stop_reason=self.stop_reason, delta_linf=float(applied.abs().max()),
            delta=applied[0, positions].cpu().numpy(),
            replaced_words=nearest_tokens(classifier, embeddings + applied, positions, list(encoding.input_ids)),
            seconds=time.perf_counter() - self.started,  # batched: the batch's time up to this result
            windows=self.windows_record())

    def windows_record(self) -> dict | None:
        """How a document was read (its windows and rule, for the provenance); None for one pass."""
        return None


class PaddedBatch:
    """The padded tensors of a group of inputs; ``rows(active)`` cuts the active inputs at their longest."""

    def __init__(self, classifier: TextClassifier, inputs: list[InputState]):
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
        baselines = [s.baseline for s in inputs if s.baseline is not None]  # IG: every input has one; else none
        self.baseline = torch.cat(
            [torch.cat([b, self.embeddings[row:row + 1, s.encoding.n_tokens:]], dim=1)
             for row, (s, b) in enumerate(zip(inputs, baselines))]) if len(baselines) == len(inputs) else None

    def forward_of(self, active: list[InputState]):
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


def optimize(classifier: TextClassifier, inputs: list[InputState], method: str, config: AttackConfig,
              progress, should_stop) -> list[InputState]:
    """The optimization loop of a group (see ``attack.attack_many``); fills each input's best iterate and stop."""
    if not inputs:
        return inputs
    batch = PaddedBatch(classifier, inputs)
    optimizer = torch.optim.Adam([s.delta for s in inputs], lr=config.learning_rate)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, step_size=config.halve_every, gamma=0.5)
    active = list(inputs)
    points = loop_points(method, config)
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
            shares = attribution_shares(scores[row, state.positions_t])
            top_mass = shares[state.top].sum()
            probabilities = torch.softmax(logits[row], dim=-1)
            predicted = int(logits[row].argmax())
            if config.objective == "constrained":
                matched = probabilities[state.target] if config.match == "probability" else logits[row, state.target]
                objective = config.alpha * top_mass + config.beta * (state.clean_match - matched) ** 2
            else:
                objective = top_mass
            objectives.append(objective)
            eligible = config.objective == "constrained" or predicted == state.target
            state.keep_if_best(float(objective.detach()), eligible, applied[row:row + 1, :state.encoding.n_tokens],
                               scores[row, state.positions_t], predicted, float(probabilities[state.target].detach()))
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
        active = [state for state in active if not state.settled(step, config)]
        if not active:
            break
    return inputs
