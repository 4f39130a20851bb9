"""F-Fidelity's fine-tuned copy (Zheng et al., ICLR 2025, arXiv 2410.02970, s. 3.1): the explained model fine-tuned
once on its training data with random word masks, explanation-agnostic, so that removing words at evaluation time
is not out of distribution and no explainer's output leaks into the model (ROAR's leakage).

Masking while fine-tuning: every time an example is drawn, beta x (its words) words chosen uniformly at random are
removed by the one perturbation engine (``models.perturb``) with the evaluation's operator. The authors' image code
removes exactly ``int(beta n)`` pixels (``RandomPixelRemoval``); a sentence of 9 words would then never lose a word at
beta = 0.1, so the count is rounded stochastically here (its mean is beta n).

The fine-tune is a job (``evaluation/runs``): ``chunks`` cells of ``steps / chunks`` optimizer steps each. A cell
starts from the previous cell's checkpoint (weights, AdamW state) and writes its own, so a stopped or crashed
fine-tune resumes at the last finished chunk. Batch order, masks and dropout of step s depend only on (seed, s):
a resumed fine-tune gives the same weights as an uninterrupted one. The last cell writes ``weights.pt`` and
``manifest.json`` (explained model and fingerprint, data and its hash, beta, operator, steps, seconds) into
``<cache>/ffid/<key>/``; the metric (``f_fidelity.py``) finds the copy by the explained model's fingerprint.
"""
from __future__ import annotations

import copy
import json
import math
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

import settings
from corpora import load_dataset
from corpora.records import DataError
from evaluation.roar.artifacts import content_key
from evaluation.runs.jobs import JOBS, Cell, CellStopped, Progress, RunSummary, run_cells, stop_requested
from evaluation.runs.store import ResultStore
from explainers.params import param, validate
from models import TextClassifier, cached_classifier, estimate_seconds, perturb
from models.classifier import TokenBatch
from models.errors import ModelError, UserFacingError
from models.training import TrainConfig, adamw, collate, freeze, set_trainable

KIND = "ffid-finetune"
FOLDER = "ffid"
MANIFEST = "manifest.json"
WEIGHTS = "weights.pt"
CHECKPOINT = "checkpoint-{}.pt"


@dataclass(frozen=True)
class FinetuneConfig:
    model: str = param("default", "Explained model", "built-in name, folder or hub id")
    train_data: str = param("sst2:train", "Fine-tuning data", "dataset id of the training examples")
    train_size: int = param(2000, "Training examples", "examples drawn from the data (0 = every one)", min=0)
    beta: float = param(0.1, "Random removal ratio beta", "fraction of the words removed at random from every "
                        "training example (F-Fidelity s. 3.1; the paper's default 0.1)", min=0.01, max=0.9)
    operator: str = param("mask", "Removal operator", "how a removed word is removed, the same at evaluation",
                          choices=("mask", "delete", "unk", "pad"))
    steps: int = param(300, "Optimizer steps", "AdamW steps of the fine-tune", min=1)
    chunks: int = param(6, "Resumable chunks", "the fine-tune is saved after each chunk of steps", min=1)
    batch_size: int = param(16, "Batch size", "examples per step", min=1)
    lr: float = param(2e-5, "Learning rate", "peak learning rate (linear warm-up 10 %, then linear decay)", min=0.0)
    max_length: int = param(64, "Max tokens", "longer inputs are cut", min=8)
    seed: int = param(0, "Seed", "data draw, batch order, masks and dropout", min=0)
    model_fingerprint: str = ""

    def __post_init__(self):
        validate(self)
        if self.chunks > self.steps:
            raise UserFacingError(f"F-Fidelity fine-tune: {self.chunks} chunks for {self.steps} steps; use at most "
                                  f"one chunk per step.")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> FinetuneConfig:
        known = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in known})

    @property
    def key(self) -> str:
        return content_key("ffid", self.to_dict())

    def chunk_bounds(self, chunk: int) -> tuple[int, int]:
        size = math.ceil(self.steps / self.chunks)
        return min(self.steps, chunk * size), min(self.steps, (chunk + 1) * size)


def ffid_root() -> Path:
    return settings.cache_dir() / FOLDER


def folder_of(config: FinetuneConfig) -> Path:
    return ffid_root() / config.key


def with_fingerprint(config: FinetuneConfig) -> FinetuneConfig:
    """The configuration with the explained model's fingerprint (a changed model is a new fine-tune)."""
    classifier = cached_classifier(config.model)
    return FinetuneConfig.from_dict({**config.to_dict(), "model_fingerprint": classifier.fingerprint})


# ----- finding a finished copy -------------------------------------------------------------------------------
def manifests() -> list[dict]:
    """Every finished fine-tuned copy, newest first."""
    root = ffid_root()
    found = []
    for path in root.glob(f"*/{MANIFEST}") if root.exists() else []:
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if (path.parent / WEIGHTS).exists():
            found.append({**manifest, "folder": str(path.parent)})
    return sorted(found, key=lambda m: m.get("finished", 0), reverse=True)


def find_finetuned(fingerprint: str, beta: float, operator: str) -> dict | None:
    """The newest manifest of a copy of the model with this fingerprint, fine-tuned at ``beta`` with ``operator``."""
    for manifest in manifests():
        if (manifest["model_fingerprint"] == fingerprint and math.isclose(manifest["beta"], beta)
                and manifest["operator"] == operator):
            return manifest
    return None


_LOADED: dict[str, TextClassifier] = {}


def load_finetuned(classifier: TextClassifier, manifest: dict) -> TextClassifier:
    """The fine-tuned copy as a classifier sharing the explained model's tokenizer (loaded once per process)."""
    folder = manifest["folder"]
    if folder not in _LOADED:
        model = copy.deepcopy(classifier.model)
        model.load_state_dict(torch.load(Path(folder) / WEIGHTS, map_location=classifier.device), strict=False)
        freeze(model)
        _LOADED[folder] = classifier.with_model(model, fingerprint=f"ffid-{Path(folder).name}",
                                                name=f"{classifier.name} (F-Fidelity fine-tune, beta "
                                                     f"{manifest['beta']:g})")
    return _LOADED[folder]


# ----- the work ------------------------------------------------------------------------------------------------
@dataclass
class TrainingData:
    encodings: list
    labels: list[int]
    digest: str


_DATA: dict[str, TrainingData] = {}


def training_data(config: FinetuneConfig, classifier: TextClassifier) -> TrainingData:
    key = content_key(config.model_fingerprint, config.train_data, config.train_size, config.seed)
    if key not in _DATA:
        examples = load_dataset(config.train_data, label_names=classifier.labels)
        if 0 < config.train_size < len(examples):
            chosen = np.sort(np.random.default_rng(config.seed).choice(len(examples), config.train_size,
                                                                       replace=False))
            examples = [examples[i] for i in chosen]
        if any(e.label is None for e in examples):
            raise DataError(f"'{config.train_data}' has examples without a gold label; F-Fidelity fine-tunes on them.")
        labels = [int(e.label) for e in examples if e.label is not None]  # none is None: checked above
        if len(set(labels)) < 2:
            raise DataError(f"The {len(labels)} examples drawn from '{config.train_data}' have a single class.")
        digest = content_key([(e.id, e.label) for e in examples])
        _DATA[key] = TrainingData([classifier.encode(e.text, e.pair) for e in examples], labels, digest)
    return _DATA[key]


def batch_indices(n_examples: int, batch_size: int, seed: int, step: int) -> list[int]:
    """The examples of optimizer step ``step``: epoch after epoch in a seeded order that depends on (seed, epoch)."""
    per_epoch = math.ceil(n_examples / batch_size)
    epoch, position = divmod(step, per_epoch)
    order = np.random.default_rng([seed, epoch]).permutation(n_examples)
    return [int(i) for i in order[position * batch_size:(position + 1) * batch_size]]


def random_keep(n_words: int, beta: float, rng: np.random.Generator) -> np.ndarray:
    """Keep mask removing beta x n words chosen uniformly (count rounded stochastically, mean beta n)."""
    count = min(n_words, int(math.floor(beta * n_words + rng.random())))
    keep = np.ones(n_words, dtype=bool)
    keep[rng.choice(n_words, size=count, replace=False)] = False
    return keep


def learning_rate(config: FinetuneConfig, step: int) -> float:
    warmup = max(1, int(0.1 * config.steps))
    factor = (step + 1) / warmup if step < warmup else max(0.0, (config.steps - step) / max(1, config.steps - warmup))
    return config.lr * factor


def _train_chunk(config: FinetuneConfig, classifier: TextClassifier, data: TrainingData, chunk: int) -> dict:
    folder = folder_of(config)
    folder.mkdir(parents=True, exist_ok=True)
    device = classifier.device
    model = copy.deepcopy(classifier.model).to(device)
    set_trainable(model, TrainConfig(trainable="all"))
    optimizer = adamw([([p for p in model.parameters() if p.requires_grad], config.lr)], 0.01)
    previous: dict[str, Any] = {"seconds": 0.0, "losses": []}
    if chunk > 0:
        path = folder / CHECKPOINT.format(chunk - 1)
        if not path.exists():
            raise ModelError(f"The F-Fidelity fine-tune's chunk {chunk - 1} checkpoint is missing ({path}); delete "
                             f"the run and start it again.")
        state = torch.load(path, map_location=device, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        previous = state["record"]
    model.train()
    labels = torch.as_tensor(data.labels, dtype=torch.long)
    pad_id = classifier.tokenizer.pad_token_id or 0
    start, end = config.chunk_bounds(chunk)
    started, losses = time.perf_counter(), []
    for step in range(start, end):
        if stop_requested():
            raise CellStopped()
        rng = np.random.default_rng([config.seed, step, 1])
        indices = batch_indices(len(data.labels), config.batch_size, config.seed, step)
        rows = [perturb(classifier, data.encodings[i], random_keep(data.encodings[i].n_words, config.beta, rng)[None],
                        config.operator) for i in indices]
        ids = [r.input_ids[0] for r in rows]
        type_rows = [r.token_type_ids for r in rows]
        types = [t[0] for t in type_rows if t is not None] if all(t is not None for t in type_rows) else None
        batch = collate(TokenBatch(input_ids=ids, token_type_ids=types), list(range(len(ids))), pad_id,
                        config.max_length, device)
        torch.manual_seed(config.seed * 1_000_003 + step)  # dropout of step s is the same after a resume
        loss = torch.nn.functional.cross_entropy(model(**batch).logits, labels[indices].to(device))
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(config, step)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], 1.0)
        optimizer.step()
        losses.append(float(loss.item()))
    record = {"seconds": previous["seconds"] + time.perf_counter() - started,
              "losses": previous["losses"] + [float(np.mean(losses))] if losses else previous["losses"]}
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "record": record}
    _atomic_save(state, folder / CHECKPOINT.format(chunk))
    old = folder / CHECKPOINT.format(chunk - 2)  # chunk - 1 stays until this cell is stored (a crash reruns it)
    if old.exists():
        old.unlink()
    if end >= config.steps:
        _finish(config, classifier, data, model, record, folder)
    return {"chunk": chunk, "steps": [start, end], "loss": float(np.mean(losses)) if losses else None,
            "seconds": round(time.perf_counter() - started, 3)}


def _atomic_save(obj, path: Path) -> None:
    partial = path.with_suffix(".partial")
    torch.save(obj, partial)
    os.replace(partial, path)


def _finish(config, classifier, data, model, record, folder: Path) -> None:
    freeze(model)
    _atomic_save(model.state_dict(), folder / WEIGHTS)
    manifest = {"model": config.model, "model_fingerprint": config.model_fingerprint,
                "model_name": classifier.name, "train_data": config.train_data, "train_size": len(data.labels),
                "data_hash": data.digest, "beta": config.beta, "operator": config.operator, "steps": config.steps,
                "batch_size": config.batch_size, "lr": config.lr, "max_length": config.max_length,
                "seed": config.seed, "seconds": round(record["seconds"], 1), "chunk_losses": record["losses"],
                "device": str(classifier.device), "finished": time.time(),
                "reference": "Zheng et al., ICLR 2025 (arXiv 2410.02970) s. 3.1: explanation-agnostic fine-tuning "
                             "with random removal at ratio beta"}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=1))
    for path in folder.glob("checkpoint-*.pt"):
        path.unlink()


def finetune_cell(spec: dict) -> dict:
    """The work of one chunk (local executor: the chunks run in order, each from the previous one's checkpoint)."""
    config = FinetuneConfig.from_dict(spec["config"])
    classifier = cached_classifier(config.model)
    if config.model_fingerprint and classifier.fingerprint != config.model_fingerprint:
        raise ModelError(f"The model '{config.model}' changed since this F-Fidelity fine-tune started; start a new "
                         f"one.")
    return _train_chunk(config, classifier, training_data(config, classifier), int(spec["chunk"]))


# ----- runs ---------------------------------------------------------------------------------------------------
def cells_of(config: FinetuneConfig) -> list[Cell]:
    return [Cell(f"chunk-{c}", {"config": config.to_dict(), "chunk": c}) for c in range(config.chunks)]


def prepare_run(config: FinetuneConfig, store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the fine-tune's run without running it."""
    store = store or ResultStore()
    cells = cells_of(config)
    title = (f"F-Fidelity fine-tune of {config.model}: beta {config.beta:g}, {config.operator}, {config.steps} steps "
             f"on {config.train_data} ({config.train_size or 'all'} examples)")
    run_id = store.create_run(KIND, config.to_dict(), total=len(cells), title=title,
                              meta={"folder": str(folder_of(config))})
    return store, run_id, cells


def run_finetune(config: FinetuneConfig, store: ResultStore | None = None, progress: Progress | None = None,
                 should_stop=None) -> tuple[ResultStore, RunSummary]:
    """Run (or resume) the fine-tune here; the chunks are sequential, so only the local executor is offered."""
    store, run_id, cells = prepare_run(config, store)
    return store, run_cells(store, run_id, cells, finetune_cell, progress=progress, should_stop=should_stop)


def start_finetune(config: FinetuneConfig, store: ResultStore) -> str:
    """Start (or resume) the fine-tune in a background thread (the app's "build it" button)."""
    store, run_id, cells = prepare_run(config, store)
    JOBS.start(store, run_id, cells, finetune_cell)
    return run_id


TOKENS_PER_SENTENCE = 24.0  # about an SST-2 training sentence with [CLS] / [SEP]: the cost model's input length


def budget(config: FinetuneConfig, classifier: TextClassifier) -> dict:
    """The fine-tune's size before it starts: one forward and one backward pass per sentence seen, and the cost
    model's seconds for them (``models.metering``)."""
    examples = config.steps * config.batch_size
    return {"steps": config.steps, "examples_seen": examples, "forward_passes": examples, "backward_passes": examples,
            "seconds": estimate_seconds(classifier, examples, examples, TOKENS_PER_SENTENCE)}


__all__ = ["FinetuneConfig", "KIND", "budget", "find_finetuned", "folder_of", "load_finetuned", "manifests",
           "prepare_run", "run_finetune", "start_finetune", "with_fingerprint"]
