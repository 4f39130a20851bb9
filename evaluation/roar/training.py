"""ROAR's retraining: a fresh model per (masked data, seed) in one of four labelled variants.

Variants (the issue's list; every result carries ``Variant.label()``):
- ``all``     full fine-tune;
- ``last-k``  the last k transformer blocks and the head are trained, the rest frozen;
- ``head``    frozen encoder, a freshly initialized head is trained (the CPU default): the encoder's output
              at the summary token is computed once per retrain (eval mode) and the head is trained on it, so
              epochs cost almost nothing (architectures in ``HEAD_FORWARD``; others train with full passes);
- ``train_size`` a training subset of N examples (applies to every variant); 0 = every example, the papers' full
  data (paper 000 s. 3.3 retrains on all of SST-2's training set, paper 001 App. C.2 on each dataset's).

Every variant starts from ``init``: ``classifier`` (the explained model's encoder, head re-initialized) or
``base`` (for built-in models: the pre-trained encoder they were fine-tuned from, as paper 000/001 retrain
from the pre-trained model). The head is always re-initialized from the seed, so a seed is a new model.
"""
from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch  # noqa: E402

from evaluation.runs.jobs import CellStopped
from explainers.params import options_from, param, validate
from models import TextClassifier, TokenBatch, runtime
from models.architectures import architecture_of, get_module
from models.errors import ModelError
from models.prepare import RECIPES, base_model_dir
from models.training import TrainConfig, collate, fit, predict_labels, seed_everything, set_trainable, train_classifier

if TYPE_CHECKING:
    from transformers import PreTrainedModel

TRAINABLE = {"head": "frozen encoder, trained head", "last-k": "last k blocks + head trained", "all": "full fine-tune"}
DEFAULT_LR = {"head": 2e-3, "last-k": 2e-4, "all": 5e-5}
EVERY_EXAMPLE = 0  # train_size / test_size: use the whole split
INITS = {"classifier": "explained model's encoder, new head", "base": "pre-trained encoder, new head"}


@dataclass(frozen=True)
class Variant:
    trainable: str = param("head", "Retraining", "; ".join(f"{k}: {v}" for k, v in TRAINABLE.items()),
                           choices=tuple(TRAINABLE))
    last_k: int = param(2, "Blocks trained (last-k)", "transformer blocks trained by the last-k variant", min=1)
    train_size: int = param(300, "Training examples", "training subset N (applies to every variant); 0 = every "
                            "example (the papers' protocol)", min=0)
    test_size: int = param(200, "Test examples", "test subset; 0 = every example", min=0)
    epochs: float = param(3.0, "Epochs", "epochs of every retrain", min=0.0)
    lr: float | None = param(None, "Learning rate", "not set = the variant's default (" +
                             ", ".join(f"{k} {v:g}" for k, v in DEFAULT_LR.items()) + ")", min=0.0, type=float)
    batch_size: int = param(16, "Batch size", min=1)
    max_length: int = param(128, "Max tokens", "inputs are truncated to this many tokens", min=1)
    init: str = param("classifier", "Start point", "; ".join(f"{k}: {v}" for k, v in INITS.items()),
                      choices=tuple(INITS))
    warmup: float = param(0.1, "Warm-up share", "share of the steps with a linear learning-rate warm-up (paper 001: "
                          "0.06; paper 000 follows HuggingFace's default, 0)", min=0.0, max=1.0)
    weight_decay: float = param(0.01, "Weight decay", "AdamW weight decay (paper 001: 0.01; paper 000: 0)", min=0.0)

    def __post_init__(self):
        if self.trainable not in TRAINABLE:
            raise ValueError(f"Unknown retraining variant '{self.trainable}'; use {', '.join(TRAINABLE)}.")
        if self.init not in INITS:
            raise ValueError(f"Unknown start point '{self.init}'; use {', '.join(INITS)}.")
        if self.train_size == 1 or self.train_size < 0 or self.test_size < 0 or self.epochs <= 0 \
                or self.batch_size < 1:
            raise ValueError("train size must be 0 (every example) or >= 2, test size >= 0 (0 = every example), "
                             "epochs > 0 and batch size >= 1.")
        validate(self)

    @property
    def learning_rate(self) -> float:
        return self.lr if self.lr is not None else DEFAULT_LR[self.trainable]

    def label(self) -> str:
        what = f"last {self.last_k} blocks + head" if self.trainable == "last-k" else TRAINABLE[self.trainable]
        train = "every" if self.train_size == EVERY_EXAMPLE else self.train_size
        test = "every" if self.test_size == EVERY_EXAMPLE else self.test_size
        return (f"{what}; {train} train / {test} test examples; {self.epochs:g} epochs, "
                f"lr {self.learning_rate:g}, batch {self.batch_size}, warm-up {self.warmup:g}, weight decay "
                f"{self.weight_decay:g}; start: {INITS[self.init]}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict | None) -> Variant:
        return options_from(cls, data)

    def train_config(self, seed: int) -> TrainConfig:
        return TrainConfig(epochs=self.epochs, lr=self.learning_rate, batch_size=self.batch_size,
                           max_length=self.max_length, seed=seed, trainable=self.trainable, last_k=self.last_k,
                           warmup=self.warmup, weight_decay=self.weight_decay)


def _reinit_head(model: PreTrainedModel, seed: int) -> None:
    """A new head from the seed (normal(0, initializer_range) weights, zero biases), as a fresh fine-tune has."""

    arch = architecture_of(model)
    if arch is None:
        raise ModelError(f"ROAR retraining needs a known architecture; '{model.config.model_type}' is not in "
                         f"models/architectures.py.")
    generator = torch.Generator().manual_seed(int(seed))
    std = float(getattr(model.config, "initializer_range", 0.02))
    with torch.no_grad():
        for path in arch.head:
            module = get_module(model, path)
            if module is None:
                continue
            for sub in module.modules():
                if isinstance(sub, torch.nn.Linear):
                    sub.weight.copy_(torch.randn(sub.weight.shape, generator=generator) * std)
                    if sub.bias is not None:
                        sub.bias.zero_()
                elif isinstance(sub, torch.nn.LayerNorm):
                    sub.weight.fill_(1.0)
                    sub.bias.zero_()


def start_model(classifier: TextClassifier, variant: Variant, seed: int) -> PreTrainedModel:
    """The model a retrain starts from (a copy: the classifier is never changed)."""
    if variant.init == "base":

        if classifier.name not in RECIPES:
            raise ModelError(f"Start point 'base' needs a built-in model ({', '.join(RECIPES)}); '{classifier.name}' "
                             f"has no known pre-trained encoder. Use init 'classifier'.")
        from transformers import AutoModelForSequenceClassification

        model = AutoModelForSequenceClassification.from_pretrained(
            base_model_dir(), num_labels=classifier.num_labels, attn_implementation="eager", use_safetensors=True)
    else:
        model = copy.deepcopy(classifier.model).cpu()
    _reinit_head(model, seed)
    return model


def trainable_names(model: torch.nn.Module, variant: Variant) -> list[str]:
    """Names of the parameters the variant trains (what a retrained model adds to its start point)."""
    set_trainable(model, variant.train_config(0))
    names = [name for name, p in model.named_parameters() if p.requires_grad]
    for parameter in model.parameters():
        parameter.requires_grad_(False)
    return names


def macro_f1(gold: np.ndarray, predicted: np.ndarray, labels: int) -> float:
    """Mean over classes of 2PR/(P+R) (classes never gold nor predicted are left out, as sklearn does)."""
    scores = []
    for c in range(labels):
        tp = float(np.sum((predicted == c) & (gold == c)))
        fp = float(np.sum((predicted == c) & (gold != c)))
        fn = float(np.sum((predicted != c) & (gold == c)))
        if tp + fp + fn == 0:
            continue
        scores.append(2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores)) if scores else float("nan")


# ----- the head variant on cached encoder features -------------------------------------------------------------
# With a frozen encoder, every epoch would run the same encoder forward passes again. The encoder's output at the
# summary token is computed once per retrain instead (in eval mode), and only the head is trained on it. The head
# functions replay what each architecture's *ForSequenceClassification.forward does after its encoder.
def _bert_head(model, first):
    return model.classifier(model.dropout(model.bert.pooler(first.unsqueeze(1))))


def _distilbert_head(model, first):
    return model.classifier(model.dropout(torch.relu(model.pre_classifier(first))))


def _classification_head(model, first):  # RobertaClassificationHead / ElectraClassificationHead read features[:, 0]
    return model.classifier(first.unsqueeze(1))


HEAD_FORWARD = {"bert": _bert_head, "distilbert": _distilbert_head, "roberta": _classification_head,
                "xlm-roberta": _classification_head, "electra": _classification_head}


@torch.inference_mode()
def encoder_features(model: PreTrainedModel, data: TokenBatch, pad_id: int, max_length: int, device,
                     batch_size: int = 64) -> torch.Tensor:
    """The encoder's last hidden state at the first (summary) token of every input, (n, hidden)."""
    model.to(device).eval()
    out: dict[int, torch.Tensor] = {}  # input index -> its feature row
    order = sorted(range(len(data)), key=lambda i: len(data.input_ids[i]))
    for start in range(0, len(order), batch_size):
        indices = order[start:start + batch_size]
        hidden = model.base_model(**collate(data, indices, pad_id, max_length, device)).last_hidden_state[:, 0]
        for k, i in enumerate(indices):
            out[i] = hidden[k].clone()
    return torch.stack([out[i] for i in range(len(data))]) if out else torch.zeros((0, model.config.hidden_size))


def train_head_on_features(model: PreTrainedModel, features: torch.Tensor, labels: list[int], config,
                           should_stop=None) -> dict:
    """Train the head alone on cached encoder features, with the same loop as fine-tuning (``models.training.fit``)."""
    head = HEAD_FORWARD[model.config.model_type]
    seed_everything(config.seed)
    set_trainable(model, config)
    model.train()
    target = torch.as_tensor(labels, dtype=torch.long, device=features.device)

    def loss_of(indices: list[int]) -> torch.Tensor:
        return torch.nn.functional.cross_entropy(head(model, features[indices]), target[indices])

    return {**fit(model, len(labels), config, loss_of, should_stop=should_stop),
            "head_training": "cached encoder features"}


def uses_cached_features(model: PreTrainedModel, variant: Variant) -> bool:
    return variant.trainable == "head" and getattr(model.config, "model_type", "") in HEAD_FORWARD


def retrain_and_evaluate(classifier: TextClassifier, train: TokenBatch, train_labels: list[int], test: TokenBatch,
                         test_labels: list[int], variant: Variant, seed: int, should_stop=None,
                         device=None) -> tuple[PreTrainedModel, dict]:
    """Train a fresh model on the (masked) training data and score it on the (masked) test data."""

    started = time.perf_counter()
    device = device or runtime.choose_device()
    model = start_model(classifier, variant, seed)
    pad_id = classifier.tokenizer.pad_token_id
    if uses_cached_features(model, variant):
        features = encoder_features(model, train, pad_id, variant.max_length, device)
        record = train_head_on_features(model, features, list(train_labels), variant.train_config(seed), should_stop)
    else:
        record = train_classifier(model, train, list(train_labels), variant.train_config(seed), pad_id,
                                  should_stop=should_stop, device=device)
        record["head_training"] = "full forward passes"
    if record["stopped"]:

        raise CellStopped("retraining was stopped")
    trained = time.perf_counter()
    if uses_cached_features(model, variant):
        with torch.inference_mode():
            features = encoder_features(model, test, pad_id, variant.max_length, device)
            predicted = HEAD_FORWARD[model.config.model_type](model, features).argmax(-1).cpu().numpy()
    else:
        predicted = predict_labels(model, test, pad_id, max_length=variant.max_length, device=device)
    gold = np.asarray(test_labels)
    metrics = {"accuracy": float(np.mean(predicted == gold)), "macro_f1": macro_f1(gold, predicted, classifier.num_labels),
               "n_train": len(train_labels), "n_test": len(test_labels),
               "predicted_share": [float(np.mean(predicted == c)) for c in range(classifier.num_labels)],
               "train_seconds": round(trained - started, 3), "eval_seconds": round(time.perf_counter() - trained, 3),
               "train_record": record, "variant": variant.label()}
    return model.cpu(), metrics
