"""Building AML's attribution model G on another encoder from the app (paper 004 s. 3.3's decoder setting: a RoBERTa
G explains Llama-2 / Mistral; here an encoder such as the default model's): ``prepare_cross_aml`` as a one-cell run
of the job runner, with the estimate, the training progress in the run's meta and Stop of the own-backbone build
(``aml_build.py``), whose recipe (``EXWB_AML_BUDGET`` included) and training data it shares.
"""
from __future__ import annotations

import math
from dataclasses import asdict

from evaluation.runs.jobs import Cell, stop_requested
from evaluation.runs.store import ResultStore, run_id_for
from evaluation.suite.aml_build import (
    CLASSIFIER_PASSES,
    SELECTION_FORWARDS,
    TYPICAL_TOKENS,
    build_recipe,
    progress_writer,
    trained_cell_value,
    training_data,
    training_data_id,
)
from explainers.mask_learning.aml_cross_training import prepare_cross_aml
from explainers.mask_learning.aml_store import MANIFEST
from explainers.mask_learning.aml_training import AMLRecipe
from explainers.mask_learning.cross_backbone import cross_folder
from explainers.mask_learning.selection import metric_named
from models import ModelError, TextClassifier, cached_classifier, estimate_seconds

KIND = "aml-cross-build"
DEFAULT_GENERATOR = "default"  # the encoder offered to a model that is a decoder (paper 004 s. 3.3)


def offers_encoder_generator(classifier: TextClassifier) -> bool:
    """Whether to offer G on another encoder: a decoder reads left to right (paper 004 s. 3.3 trains its G on an
    encoder for Llama / Mistral), and a tokenizer without [MASK] has no mask the paper's G was trained toward."""
    return bool(classifier.causal) or classifier.tokenizer.mask_token_id is None


def estimate_cross_build_seconds(classifier: TextClassifier, source: TextClassifier, recipe: AMLRecipe) -> float:
    """The one cost model: per training input and epoch, G's forward and backward on the generator, the classifier's
    prediction (y_v) and its two masked passes forward and backward; per epoch, G and the metric's curve on every
    validation input (one input per step: the two tokenizations differ)."""
    epochs = max(1, math.ceil(recipe.epochs))
    steps = recipe.train_size * epochs
    validation = epochs * recipe.validation_size
    generator = estimate_seconds(source, steps + validation, steps, TYPICAL_TOKENS)
    explained = estimate_seconds(classifier, steps * (1 + CLASSIFIER_PASSES) + validation * SELECTION_FORWARDS,
                                 steps * CLASSIFIER_PASSES, TYPICAL_TOKENS)
    return generator + explained


def cross_build_config(model: str, classifier: TextClassifier, tune: str, generator: str,
                       source: TextClassifier) -> dict:
    """What identifies a build (the run id is its hash): both models, the metric, the data and the recipe."""
    return {"model": model, "model_fingerprint": classifier.fingerprint, "generator": generator,
            "generator_fingerprint": source.fingerprint, "tune": metric_named(tune).name,
            "data": training_data_id(classifier), "recipe": asdict(build_recipe(tune))}


def cross_build_run_id(model: str, classifier: TextClassifier, tune: str, generator: str,
                       source: TextClassifier) -> str:
    """The id of this build run, whether it was started or not (nothing is written)."""
    return run_id_for(KIND, cross_build_config(model, classifier, tune, generator, source))


def start_cross_build(model: str, classifier: TextClassifier, tune: str, generator: str, source: TextClassifier,
                      store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """The run (one cell) that builds G on ``generator`` for ``model``; a finished run whose checkpoint is gone is
    started afresh."""
    store = store or ResultStore()
    metric = metric_named(tune)
    config = cross_build_config(model, classifier, tune, generator, source)
    meta = {"estimated_cell_seconds": estimate_cross_build_seconds(classifier, source, build_recipe(tune))}
    title = f"AML attribution model of {model} on {generator} tuned for {metric.label}"
    run_id = store.create_run(KIND, config, total=1, meta=meta, title=title)
    if store.cells(run_id) and not (cross_folder(classifier.fingerprint, metric, generator) / MANIFEST).is_file():
        store.delete_run(run_id)
        run_id = store.create_run(KIND, config, total=1, meta=meta, title=title)
    return store, run_id, [Cell(key="build", spec={**config, "store": str(store.path), "run_id": run_id})]


def cross_build_cell(spec: dict) -> dict:
    """Train G on the generator; progress into the run's meta; a Stop ends it, nothing saved."""
    classifier = cached_classifier(spec["model"])
    source = cached_classifier(spec["generator"])
    if (classifier.fingerprint, source.fingerprint) != (spec["model_fingerprint"], spec["generator_fingerprint"]):
        raise ModelError(f"The model '{spec['model']}' or the generator '{spec['generator']}' changed since the build "
                         f"was started; start it again.")
    store, run_id = ResultStore(spec["store"]), spec["run_id"]
    data, inputs = training_data(classifier, spec["data"])
    return trained_cell_value(lambda: prepare_cross_aml(
        classifier, spec["generator"], inputs, AMLRecipe(**spec["recipe"]), data_id=data, log=lambda _: None,
        progress=progress_writer(store, run_id), should_stop=stop_requested))
