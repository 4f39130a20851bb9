"""Fine-tuning a sequence classifier: used to prepare the default models and to retrain for ROAR.

Inputs are token-id sequences (a TokenBatch) and labels, so ROAR can train on masked ids directly.
``trainable`` picks the retraining variant: all weights, the last k blocks + head, or the head only.
"""
from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

import numpy as np
import torch  # noqa: E402

from models import runtime
from models.architectures import architecture_of, get_module, input_embedding, stack_at
from models.classifier import TokenBatch


@dataclass(frozen=True)
class TrainConfig:
    epochs: float = 1.0
    lr: float = 1e-4
    batch_size: int = 32
    max_length: int = 64
    warmup: float = 0.1
    weight_decay: float = 0.01
    grad_clip: float = 1.0
    seed: int = 0
    trainable: str = "all"  # "all" | "last-k" | "head"
    last_k: int = 2
    freeze_word_embeddings: bool = False

    def to_dict(self) -> dict:
        return asdict(self)


Progress = Callable[[int, int, dict], None]


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def set_trainable(model: torch.nn.Module, config: TrainConfig) -> int:
    """Freeze what the variant does not train; return the number of trainable parameters."""
    arch = architecture_of(model)
    for parameter in model.parameters():
        parameter.requires_grad_(config.trainable == "all")
    if config.trainable in ("last-k", "head"):
        if arch is None:
            raise ValueError(f"Retraining variant '{config.trainable}' needs a known architecture; "
                             f"'{getattr(getattr(model, 'config', None), 'model_type', type(model).__name__)}' is not in "
                             f"models/architectures.py.")
        modules = [get_module(model, path) for path in arch.head]
        if config.trainable == "last-k":
            modules += list(stack_at(model, arch.blocks))[-config.last_k:]
        for module in modules:
            if module is not None:
                for parameter in module.parameters():
                    parameter.requires_grad_(True)
    if config.freeze_word_embeddings:
        input_embedding(model).weight.requires_grad_(False)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _batches(order: list[int], size: int):
    for start in range(0, len(order), size):
        yield order[start:start + size]


def collate(data: TokenBatch, indices: list[int], pad_id: int, max_length: int, device) -> dict:
    """Padded model inputs (ids, attention mask, token types) of some rows of a TokenBatch."""
    sequences = [data.input_ids[i][:max_length] for i in indices]
    width = max(len(s) for s in sequences)
    ids = torch.full((len(indices), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(indices), width), dtype=torch.long)
    for row, sequence in enumerate(sequences):
        ids[row, :len(sequence)] = torch.as_tensor(sequence)
        mask[row, :len(sequence)] = 1
    batch = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
    if data.token_type_ids is not None:
        types = torch.zeros((len(indices), width), dtype=torch.long)
        for row, i in enumerate(indices):
            sequence = data.token_type_ids[i][:max_length]
            types[row, :len(sequence)] = torch.as_tensor(sequence)
        batch["token_type_ids"] = types.to(device)
    return batch


def adamw(groups: list[tuple[list[torch.nn.Parameter], float]], weight_decay: float) -> torch.optim.AdamW:
    """AdamW over (parameters, learning rate) groups; no weight decay on biases and norms (fewer than 2 dims)."""
    split = []
    for parameters, lr in groups:
        split += [{"params": [p for p in parameters if p.ndim >= 2], "weight_decay": weight_decay, "lr": lr},
                  {"params": [p for p in parameters if p.ndim < 2], "weight_decay": 0.0, "lr": lr}]
    return torch.optim.AdamW([g for g in split if g["params"]])


def optimize(model: torch.nn.Module, optimizer: torch.optim.Optimizer, batches: Iterator, loss_of: Callable,
             total: int, warmup: int, grad_clip: float = 1.0, progress: Progress | None = None,
             should_stop: Callable[[], bool] | None = None, start_step: int = 0) -> dict:
    """The one optimizer loop: ``total`` steps of ``loss_of(next(batches))``, gradient clipping, linear warm-up
    over ``warmup`` steps then linear decay to 0; the model is frozen in eval mode at the end. ``start_step``
    resumes a run at that step of its schedule (the optimizer's state restored by the caller).

    Fine-tuning, ROAR's cached-feature heads (through ``fit``) and the masked-LM head (``models/mlm/prepare.py``)
    all train here; only what a batch is and how its loss is computed differ.
    """
    parameters = [p for p in model.parameters() if p.requires_grad]
    def rate(s: int) -> float:
        return (s + 1) / max(1, warmup) if s < warmup else max(0.0, (total - s) / max(1, total - warmup))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: rate(s + start_step))
    step, losses, started, stopped = start_step, [], time.perf_counter(), False
    while step < total:
        if should_stop is not None and should_stop():
            stopped = True
            break
        batch = next(batches, None)
        if batch is None:
            break
        loss = loss_of(batch)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(parameters, grad_clip)
        optimizer.step()
        schedule.step()
        step += 1
        losses.append(loss.item())
        if progress is not None:
            progress(step, total, {"loss": float(np.mean(losses[-20:])), "seconds": time.perf_counter() - started})
    freeze(model)
    return {"steps": step, "total_steps": total, "trainable_parameters": sum(p.numel() for p in parameters),
            "stopped": stopped, "final_loss": float(np.mean(losses[-20:])) if losses else None,
            "seconds": round(time.perf_counter() - started, 1)}


def shuffled_batches(n_examples: int, batch_size: int, seed: int) -> Iterator[list[int]]:
    """Batches of example indices, epoch after epoch, each epoch in a new seeded order."""
    generator = random.Random(seed)
    while n_examples:
        order = list(range(n_examples))
        generator.shuffle(order)
        yield from _batches(order, batch_size)


def fit(model: torch.nn.Module, n_examples: int, config: TrainConfig, loss_of: Callable[[list[int]], torch.Tensor],
        progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> dict:
    """Train the parameters of ``model`` that require gradients for ``config.epochs`` over ``n_examples``, then
    freeze it in eval mode (``optimize``); ``loss_of(indices)`` gives the loss of one batch of example indices.
    Used for fine-tuning and for ROAR's cached-feature heads.
    """
    parameters = [p for p in model.parameters() if p.requires_grad]
    steps_per_epoch = math.ceil(n_examples / config.batch_size)
    total = max(1, int(round(steps_per_epoch * config.epochs)))
    return optimize(model, adamw([(parameters, config.lr)], config.weight_decay),
                    shuffled_batches(n_examples, config.batch_size, config.seed), loss_of, total,
                    int(total * config.warmup), config.grad_clip, progress, should_stop)


def freeze(model: torch.nn.Module) -> None:
    """Eval mode, no gradients: how every trained model is handed to the explainers."""
    model.eval()
    for parameter in model.parameters():
        parameter.requires_grad_(False)


def train_classifier(model: torch.nn.Module, data: TokenBatch, labels: list[int], config: TrainConfig,
                     pad_id: int, progress: Progress | None = None,
                     should_stop: Callable[[], bool] | None = None, device=None) -> dict:
    """Fine-tune in place (see ``fit``); returns a small training record."""
    device = device or runtime.choose_device()
    seed_everything(config.seed)
    model.to(device).train()
    set_trainable(model, config)
    target = torch.as_tensor(labels, dtype=torch.long)

    def loss_of(indices: list[int]) -> torch.Tensor:
        batch = collate(data, indices, pad_id, config.max_length, device)
        return torch.nn.functional.cross_entropy(model(**batch).logits, target[indices].to(device))

    return fit(model, len(labels), config, loss_of, progress, should_stop)


def predict_labels(model: torch.nn.Module, data: TokenBatch, pad_id: int, max_length: int = 128,
                   batch_size: int = 64, device=None) -> np.ndarray:
    device = device or runtime.choose_device()
    model.to(device).eval()
    order = sorted(range(len(data)), key=lambda i: len(data.input_ids[i]))
    predictions = np.zeros(len(data), dtype=np.int64)
    for indices in _batches(order, batch_size):
        logits = model(**collate(data, indices, pad_id, max_length, device)).logits
        predictions[indices] = logits.argmax(-1).cpu().numpy()
    return predictions
