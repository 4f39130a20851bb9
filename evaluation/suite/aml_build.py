"""Building AML's attribution model from the app: pAML training (``explainers/mask_learning/aml_training.py``) as a one-cell run of
the job runner (``evaluation/runs/jobs.py``), so the page shows its progress and can stop it like any long run.

The cell writes its training progress (step, total, loss, validation score) into the run's ``meta["training"]``,
which the run's progress bar shows. ``EXWB_AML_BUDGET`` ("train_size=20,validation_size=8,epochs=1") shrinks the
recipe for tests and demos; the default is the paper's recipe (``AMLRecipe``).
"""
from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import settings
from corpora import load_dataset
from evaluation.runs.jobs import Cell, CellStopped, stop_requested
from evaluation.runs.store import ResultStore, run_id_for
from evaluation.suite.recipe_budget import with_budget
from explainers.mask_learning.aml_store import find_checkpoint, read_manifest
from explainers.mask_learning.aml_training import AMLRecipe, Progress, prepare_aml
from explainers.mask_learning.selection import metric_named
from models import ModelError, TextClassifier, UserFacingError, cached_classifier, estimate_seconds

KIND = "aml-build"
BUDGET_ENV = "EXWB_AML_BUDGET"
TYPICAL_TOKENS = 32  # an SST-2 sentence: the estimate's input length when the training data is not read yet
CLASSIFIER_PASSES = 2  # per training input and step: the classifier on the masked and on the inverse-masked input
SELECTION_FORWARDS = 6  # per validation input and check: G, then the metric's removal curve (AOPC: 5 bins)
PROGRESS_EVERY = 2.0  # seconds between progress writes to the store


def build_recipe(tune: str) -> AMLRecipe:
    """The recipe the app builds with: the paper's, unless ``EXWB_AML_BUDGET`` overrides some of its numbers."""
    recipe = AMLRecipe(tune=metric_named(tune).name)
    return with_budget(recipe, settings.aml_budget(), BUDGET_ENV)


def estimate_build_seconds(classifier: TextClassifier, recipe: AMLRecipe) -> float:
    """Training seconds from the one cost model: every training input, every epoch, one forward and backward of G
    and of the classifier twice; every validation check, G and the metric's curve on every validation input."""
    steps = recipe.train_size * recipe.epochs
    checks = math.ceil(recipe.epochs / recipe.eval_every) + 1
    forward = steps * (1 + CLASSIFIER_PASSES) + checks * recipe.validation_size * SELECTION_FORWARDS
    backward = steps * (1 + CLASSIFIER_PASSES)
    return estimate_seconds(classifier, forward, backward, TYPICAL_TOKENS)


def training_data_id(classifier: TextClassifier) -> str:
    """The dataset to train G on: the data the model was trained on (its manifest says which)."""
    data = classifier.manifest.get("train_data")
    if not data:
        raise UserFacingError(f"'{classifier.name}' does not say which data it was trained on, so the app cannot "
                              f"build its AML attribution model; run `python cli.py prepare-aml --model ... --data "
                              f"DATASET:SPLIT`.")
    return data


def training_data(classifier: TextClassifier, data: str | None = None) -> tuple[str, list]:
    """(dataset id, (text, pair) inputs) to train G on: the data the model was trained on, unless named."""
    data = data or training_data_id(classifier)
    return data, [(e.text, e.pair) for e in load_dataset(data)]


def build_config(model: str, classifier: TextClassifier, tune: str) -> dict:
    """What identifies a build (the run id is its hash): the model, the metric, the data and the recipe."""
    return {"model": model, "model_fingerprint": classifier.fingerprint, "tune": metric_named(tune).name,
            "data": training_data_id(classifier), "recipe": asdict(build_recipe(tune))}


def build_run_id(model: str, classifier: TextClassifier, tune: str) -> str:
    """The id of the build run of this model and metric, whether it was started or not (nothing is written)."""
    return run_id_for(KIND, build_config(model, classifier, tune))


def start_build(model: str, classifier: TextClassifier, tune: str,
                store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """The run (one cell) that builds the attribution model of ``model`` selected on ``tune``; a finished run whose
    checkpoint is gone is started afresh."""
    store = store or ResultStore()
    metric = metric_named(tune)
    config = build_config(model, classifier, tune)
    estimate = estimate_build_seconds(classifier, build_recipe(tune))
    meta = {"estimated_cell_seconds": estimate}
    run_id = store.create_run(KIND, config, total=1, meta=meta,
                              title=f"AML attribution model of {model} tuned for {metric.label}")
    if store.cells(run_id) and find_checkpoint(classifier.fingerprint, metric) is None:
        store.delete_run(run_id)
        run_id = store.create_run(KIND, config, total=1, meta=meta, title=f"AML attribution model of {model}")
    cell = Cell(key="build", spec={**config, "store": str(store.path), "run_id": run_id})
    return store, run_id, [cell]


def progress_writer(store: ResultStore, run_id: str) -> Progress:
    """The training loop's ``progress`` callback: step, total, loss and validation into the run's meta (which the
    run's progress bar shows), at most every ``PROGRESS_EVERY`` seconds."""
    run = store.get_run(run_id)
    if run is None:  # deleted (Delete in the runs list) between its start and this cell
        raise UserFacingError(f"The AML build run {run_id} is no longer in the result store; start the build again.")
    meta = dict(run["meta"])
    last = [0.0]

    def progress(step: int, total: int, info: dict) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_EVERY and step < total:
            return
        last[0] = now
        meta["training"] = {"step": step, "total": total, "loss": info.get("loss"),
                            "validation": info.get("best", info.get("validation"))}
        store.set_status(run_id, "running", meta=meta)

    return progress


def build_cell(spec: dict) -> dict:
    """Train (or find) the attribution model; progress into the run's meta; a Stop ends it, nothing saved."""
    classifier = cached_classifier(spec["model"])
    if classifier.fingerprint != spec["model_fingerprint"]:
        raise ModelError(f"The model '{spec['model']}' changed since the build was started; start it again.")
    store, run_id = ResultStore(spec["store"]), spec["run_id"]
    recipe = AMLRecipe(**spec["recipe"])
    data, inputs = training_data(classifier, spec["data"])
    return trained_cell_value(lambda: prepare_aml(classifier, inputs, recipe, data_id=data,
                                                  progress=progress_writer(store, run_id),
                                                  should_stop=stop_requested, log=lambda _: None))


def trained_cell_value(train: Callable[[], Path]) -> dict:
    """A build cell's value: ``train`` run (a Stop during it ends the cell, nothing saved), then the figures of
    the manifest it wrote."""
    try:
        folder = train()
    except ModelError:
        if stop_requested():
            raise CellStopped() from None
        raise
    manifest = read_manifest(folder)
    return {"folder": str(folder), "validation_score": manifest.get("validation_score"),
            "seconds": manifest.get("seconds")}
