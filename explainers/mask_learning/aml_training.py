"""Training AML's attribution model G for one classifier (pAML; paper 004 s. 3.1, 4 and its code).

G learns on about 800 training inputs (the reference code's stratified sample; here a seeded sample) for 5
epochs at batch 20 with AdamW (lr 4e-5, linear decay, no warm-up), the classifier frozen; every 0.32 epoch its
maps of 200 held-out inputs are scored on the chosen metric and the best checkpoint is kept (s. 3.1: the
best G is selected by the target metric on validation). The result is cached with a manifest like
``cli.py prepare`` (``explainers/mask_learning/aml_store.py``).

Default lambdas (lambda_p, lambda_a, lambda_inv) = (1, 10, 10): lambda_p = 1 and lambda_a = 10 are the reference
code's defaults before its search; the code's lambda_inv = 0 would drop the comprehensiveness term, which
paper 004 needs for every Comp-type metric (App. A.2: searches for Comp pick a high lambda_inv, and the
Table 4 ablation without L_inv loses Comp), so it gets the same weight as the sparsity term. The paper's search
(Optuna TPE over integers 1-100, 40 trials of 1 epoch on 400 inputs, validated on 200) is ``search_trials``.

The selection metric is computed by ``explainers/mask_learning/selection.py`` (the same numbers as
``evaluation/faithfulness/presets.py``; fAML must select inside the explainer, which may not import this layer).
"""
from __future__ import annotations

import hashlib
import json
import operator
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, replace
from functools import reduce

import numpy as np
import torch  # noqa: E402

from explainers.aggregate import aggregate_to_words
from explainers.mask_learning.aml_lambda_search import SEARCH_INPUTS, tpe_search
from explainers.mask_learning.aml_model import (
    PREDICTION_TARGETS,
    AttributionModel,
    aml_terms,
    conditioning,
    mask_token_id,
)
from explainers.mask_learning.aml_store import checkpoint_folder, find_checkpoint, save_checkpoint
from explainers.mask_learning.selection import DEFAULT_METRIC, SelectionMetric, metric_named, metric_of_inputs
from models import ModelError, TextClassifier, UserFacingError
from models.runtime import library_versions
from models.training import TrainConfig, collate, fit

Progress = Callable[[int, int, dict], None]


@dataclass
class _Best:
    """The checkpoint best on validation so far (s. 3.1: G is selected by the target metric)."""
    score: float | None = None
    step: int = 0
    state: dict[str, torch.Tensor] | None = None


@dataclass(frozen=True)
class AMLRecipe:
    tune: str = DEFAULT_METRIC  # the validation metric the checkpoint is selected on
    train_size: int = 800
    validation_size: int = 200
    epochs: float = 5.0
    batch_size: int = 20
    lr: float = 4e-5
    weight_decay: float = 0.01
    lambda_p: float = 1.0
    lambda_a: float = 10.0
    lambda_inv: float = 10.0
    prediction_target: str = "soft"  # y_v = F's probabilities (paper Eq. 5); "argmax" as coded
    mask_token: str = "mask"
    dropout: float = 0.1
    eval_every: float = 0.32  # epochs between validation checks (reference code)
    seed: int = 0
    group_lengths: bool = True  # compute only: the classifier's passes skip padding (same loss up to float rounding)

    def __post_init__(self):
        metric_named(self.tune)
        if self.prediction_target not in PREDICTION_TARGETS:
            raise ValueError(f"prediction_target must be one of {', '.join(PREDICTION_TARGETS)}")
        if not any(self.lambdas):  # Eq. 4 would have no term: nothing to train G on
            raise UserFacingError("AML needs at least one non-zero lambda (lambda_p, lambda_a, lambda_inv); got "
                                  f"{self.lambdas}. The defaults are 1,10,10 (--lambdas P,A,INV).")

    @property
    def lambdas(self) -> tuple[float, float, float]:
        return self.lambda_p, self.lambda_a, self.lambda_inv

    def with_lambdas(self, lambdas: Mapping[str, float]) -> AMLRecipe:
        """This recipe with the three lambdas of ``lambdas`` (the search's {lambda_p, lambda_a, lambda_inv})."""
        return replace(self, lambda_p=float(lambdas["lambda_p"]), lambda_a=float(lambdas["lambda_a"]),
                       lambda_inv=float(lambdas["lambda_inv"]))


def _hash(items) -> str:
    return hashlib.sha256(json.dumps(list(items), ensure_ascii=False).encode("utf-8")).hexdigest()


def split_inputs(inputs: list[tuple[str, str | None]], recipe: AMLRecipe):
    """Seeded disjoint training and validation samples of (text, pair) inputs."""
    unique = list(dict.fromkeys(inputs))
    random.Random(recipe.seed).shuffle(unique)
    if len(unique) < 4:
        raise UserFacingError(f"AML needs at least 4 distinct training inputs; got {len(unique)}.")
    validation = unique[:min(recipe.validation_size, max(2, len(unique) // 5))]
    train = unique[len(validation):len(validation) + recipe.train_size]
    return train, validation


class _Data:
    """Token ids of some inputs and the frozen classifier's predictions on them."""

    def __init__(self, classifier: TextClassifier, inputs: list[tuple[str, str | None]]):
        self.inputs = inputs
        pairs = [p or "" for _, p in inputs] if any(p for _, p in inputs) else None
        self.batch = classifier.tokenize_texts([t for t, _ in inputs], pairs)
        probabilities = classifier.predict_proba(self.batch)
        self.probabilities = torch.as_tensor(probabilities, dtype=torch.float32)
        self.labels = self.probabilities.argmax(dim=1)


class ValidationSet:
    """The held-out inputs G can read, encoded once in length order (G's chunks are padded to their longest), with
    the frozen classifier's predictions (y_v) on them."""

    def __init__(self, classifier: TextClassifier, inputs: list[tuple[str, str | None]], recipe: AMLRecipe):
        encodings = [e for e in (classifier.encode(text, pair) for text, pair in inputs)
                     if e.n_words and e.n_tokens < classifier.max_length]  # G needs one more position
        self.encodings = sorted(encodings, key=lambda e: e.n_tokens)
        self.y = None
        if self.encodings:
            probabilities = torch.as_tensor(np.stack([classifier.proba_of(e) for e in self.encodings]),
                                            dtype=torch.float32, device=classifier.device)
            self.y = conditioning(probabilities, probabilities.argmax(1), recipe.prediction_target)


def validation_score(classifier: TextClassifier, model: AttributionModel, validation: ValidationSet,
                     metric: SelectionMetric, batch_size: int = 50) -> float:
    """Mean metric of G's maps (word score = largest sub-word score) over the validation inputs; all the
    metric's perturbed copies in one engine call."""
    encodings, y, words = validation.encodings, validation.y, []
    if y is None:  # no input G can read (``ValidationSet`` has y exactly when it has encodings)
        return float("nan")
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for start in range(0, len(encodings), batch_size):
            chunk = encodings[start:start + batch_size]
            batch = collate(classifier.batch_of(chunk), list(range(len(chunk))), classifier.tokenizer.pad_token_id,
                            classifier.max_length, classifier.device)
            maps = torch.sigmoid(model(batch["input_ids"], batch["attention_mask"],
                                       y[start:start + batch_size],
                                       batch.get("token_type_ids"))).cpu().double().numpy()
            words += [aggregate_to_words(maps[row, :e.n_tokens], e.token_word, e.n_words, "max")
                      for row, e in enumerate(chunk)]
    if was_training:
        model.train()
    return float(np.mean(metric_of_inputs(classifier, encodings, words, metric)))


def train_attribution_model(classifier: TextClassifier, train: list, validation: list, recipe: AMLRecipe,
                            progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> tuple:
    """G trained on ``train`` (the classifier frozen), the checkpoint best on ``validation``; (G, record)."""
    metric = metric_named(recipe.tune)
    mask_id, note = mask_token_id(classifier, recipe.mask_token)
    device = classifier.device
    data = _Data(classifier, train)
    held_out = ValidationSet(classifier, validation, recipe)
    model = AttributionModel.from_classifier(classifier, dropout=recipe.dropout, seed=recipe.seed)
    model.train()
    config = TrainConfig(epochs=recipe.epochs, lr=recipe.lr, batch_size=recipe.batch_size, warmup=0.0,
                         weight_decay=recipe.weight_decay, seed=recipe.seed)
    steps_per_epoch = int(np.ceil(len(train) / recipe.batch_size))
    total = max(1, int(round(steps_per_epoch * recipe.epochs)))
    check_every = max(1, int(round(recipe.eval_every * steps_per_epoch)))
    history: list[tuple[int, float]] = []
    best = _Best()

    def loss_of(indices: list[int]) -> torch.Tensor:
        # one position is left for G's prediction encoding (an input cut this way loses its final [SEP])
        batch = collate(data.batch, indices, classifier.tokenizer.pad_token_id, classifier.max_length - 1, device)
        probabilities = data.probabilities[indices].to(device)
        labels = data.labels[indices].to(device)
        y = conditioning(probabilities, labels, recipe.prediction_target)
        terms = aml_terms(classifier, model, batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"),
                          y, labels, mask_id, recipe.lambdas, recipe.group_lengths)
        return reduce(operator.add, terms.values())  # Eq. 4; the recipe has at least one term

    def checkpoint(step: int, _total: int, info: dict) -> None:
        if step % check_every == 0 or step == total:
            score = validation_score(classifier, model, held_out, metric)
            history.append((step, round(score, 6)))
            better = best.score is None or (score > best.score if metric.higher_is_better else score < best.score)
            if better:
                best.score, best.step = score, step
                best.state = {k: v.detach().clone() for k, v in model.state_dict().items()}
            info = {**info, "validation": score, "best": best.score}
        if progress is not None:
            progress(step, total, info)

    torch.manual_seed(recipe.seed)  # dropout in G
    record = fit(model, len(train), config, loss_of, progress=checkpoint, should_stop=should_stop)
    if record["stopped"]:
        raise ModelError("Building the AML attribution model was stopped; nothing was saved.")
    if best.state is not None:
        model.load_state_dict(best.state)
    model.eval()
    record.update(validation_history=history, best_step=best.step, validation_score=best.score,
                  mask_token_note=note)
    return model, record


def search_lambdas(classifier: TextClassifier, train: list, validation: list, recipe: AMLRecipe, trials: int,
                   log: Callable[[str], None] = print) -> dict:
    """Paper 004's lambda search (``aml_lambda_search.tpe_search``), each trial 1 epoch on 400 inputs."""
    def score(lambdas: dict[str, float]) -> float:
        _, record = train_attribution_model(classifier, train[:SEARCH_INPUTS], validation,
                                            replace(recipe.with_lambdas(lambdas), epochs=1.0))
        return record["validation_score"]

    return tpe_search(score, metric_named(recipe.tune), trials, log)


def prepare_aml(classifier: TextClassifier, inputs: list[tuple[str, str | None]], recipe: AMLRecipe = AMLRecipe(),
                data_id: str = "", progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
                force: bool = False, search_trials: int = 0, log: Callable[[str], None] = print):
    """Build (or find) the AML attribution model of this classifier for ``recipe.tune``; returns its folder."""
    metric = metric_named(recipe.tune)
    existing = find_checkpoint(classifier.fingerprint, metric)
    if existing is not None and not force:
        return existing
    started = time.time()
    train, validation = split_inputs(inputs, recipe)
    search = None
    if search_trials:
        search = search_lambdas(classifier, train, validation, recipe, search_trials, log)
        recipe = recipe.with_lambdas(search["best"])
    log(f"Training the AML attribution model of '{classifier.name}' on {len(train)} inputs ({recipe.epochs:g} epochs, "
        f"batch {recipe.batch_size}, lambdas {recipe.lambdas}); selecting on {metric.label} over {len(validation)} "
        f"held-out inputs.")
    model, record = train_attribution_model(classifier, train, validation, recipe, progress, should_stop)
    manifest = {
        "name": "aml", "explained_model": {"name": classifier.name, "fingerprint": classifier.fingerprint,
                                           "source": classifier.source},
        "tuned_for": {"id": metric.id, "name": metric.name, "label": metric.label,
                      "higher_is_better": metric.higher_is_better},
        "validation_score": record["validation_score"], "validation_history": record["validation_history"],
        "lambdas": {"lambda_p": recipe.lambda_p, "lambda_a": recipe.lambda_a, "lambda_inv": recipe.lambda_inv},
        "lambda_search": search, "data": data_id, "train_inputs": len(train), "train_data_sha256": _hash(train),
        "validation_inputs": len(validation), "validation_data_sha256": _hash(validation),
        "recipe": asdict(recipe), "training": record, "prediction_slot": model.prediction_slot,
        "library_versions": library_versions(), "device": str(classifier.device), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(time.time() - started, 1),
    }
    folder = save_checkpoint(model, manifest, checkpoint_folder(classifier.fingerprint, metric))
    log(f"Saved the AML attribution model to {folder} ({metric.label} on validation: {record['validation_score']:.4f}; "
        f"{manifest['seconds']:.0f} s).")
    return folder
