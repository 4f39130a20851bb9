"""The data-randomization test (Adebayo et al. 2018, "Sanity Checks for Saliency Maps", sec. 4): fine-tune a copy of
the model on its training data with the labels randomly permuted, then compare each method's maps on the original
and on the permuted-label model. The permuted-label model can only memorize; a method whose maps stay the same does
not depend on the relation between inputs and labels that the model learned.

Building the model is a one-cell run of the job runner (``evaluation/runs``): cached (a finished build's folder, with
a ``manifest.json`` like the prepared models', is found again by its settings), stoppable, and restarted afresh after
a stop (nothing half-made is saved). The budget: ``DEFAULT_STEPS`` optimizer steps of ``DEFAULT_BATCH`` examples by
default (a few minutes of CPU for MiniLM); Adebayo et al. trained to convergence, which memorizes the permuted labels
much further: fewer steps move the model less, so a similarity here is an upper bound of the paper's.

The comparison per example: the original model's class is explained on both models (the same target, as in MPRT),
and the maps are compared with the MPRT measures (Spearman, Spearman of |a|, top-k overlap); the random band is
each original map against random permutations of itself.
"""
from __future__ import annotations

import copy
import hashlib
import json
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

import settings
from corpora import load_dataset
from evaluation import targets
from evaluation.metric import Metric, register_metric
from evaluation.runs.header import create_dataset_run
from evaluation.runs.jobs import Cell, CellStopped, Progress, RunSummary, run_cells, stop_requested
from evaluation.runs.store import ResultStore
from evaluation.sanity import one_input
from evaluation.summary import cell_rows_frame
from explainers.cache import DEFAULT_CACHE
from models import ModelError, TextClassifier, cached_classifier, load_classifier, randomize
from models.prepare import file_sha256

if TYPE_CHECKING:
    from transformers import PreTrainedModel
from models.runtime import library_versions
from models.training import TrainConfig, train_classifier

BUILD_KIND = "data-randomization-build"
KIND = "data-randomization"
STAGE = "permuted labels"
DEFAULT_STEPS = 200
DEFAULT_BATCH = 16
DEFAULT_LR = 1e-4
REFERENCE = "Adebayo et al. 2018, Sanity Checks for Saliency Maps, sec. 4 (data randomization test)"
METRICS = {m.id: register_metric(m) for m in [
    Metric("sanity_data_randomization", "Data randomization: Spearman ρ, original vs permuted-label model",
           "sanity", False, (-1.0, 1.0), "Rank correlation of a method's map on the original model with its map on "
           "a copy fine-tuned on permuted labels; a faithful method falls toward the random band.", REFERENCE),
    Metric("sanity_data_randomization_top_k", "Data randomization: top-k overlap, original vs permuted-label model",
           "sanity", False, (0.0, 1.0), "Share of the original top-k words still in the top k on the permuted-label "
           "model.", REFERENCE),
]}
MEASURES = {"spearman": "sanity_data_randomization", "spearman_abs": "sanity_spearman_abs",
            "top_k": "sanity_data_randomization_top_k"}


@dataclass(frozen=True)
class BuildOptions:
    steps: int = DEFAULT_STEPS
    batch_size: int = DEFAULT_BATCH
    lr: float = DEFAULT_LR
    seed: int = 0
    max_length: int = 64


def permuted(labels, seed: int) -> list[int]:
    """The labels in a seeded random order: same label counts, no relation to the inputs."""
    return [int(y) for y in np.random.default_rng(seed).permutation(np.asarray(labels, dtype=np.int64))]


def train_permuted(classifier: TextClassifier, texts: list[str], labels: list[int], options: BuildOptions,
                   pairs: list[str] | None = None, progress=None,
                   should_stop=None) -> tuple[PreTrainedModel, dict]:
    """A trained copy of ``classifier``'s model fine-tuned on ``labels`` permuted (the shared model untouched),
    and its training record, with the agreement of its predictions with the true and the permuted labels."""
    shuffled = permuted(labels, options.seed)
    model = copy.deepcopy(classifier.model)
    data = classifier.tokenize_texts(texts, pairs)
    epochs = options.steps * options.batch_size / max(1, len(labels))
    config = TrainConfig(epochs=epochs, lr=options.lr, batch_size=options.batch_size, max_length=options.max_length,
                         seed=options.seed, warmup=0.1, weight_decay=0.0)
    record = train_classifier(model, data, shuffled, config, classifier.tokenizer.pad_token_id, progress=progress,
                              should_stop=should_stop, device=classifier.device)
    probabilities = classifier.with_model(model, "permuted-labels-check").predict_proba(data)
    predictions, truth = probabilities.argmax(axis=1), np.asarray(labels)
    # argmax agreement alone misleads when the outputs end near-uniform (a tie broken the same way for every input):
    # the mean probability of the true class says whether the model still separates the true classes
    record.update(agreement_true=float(np.mean(predictions == truth)),
                  agreement_permuted=float(np.mean(predictions == np.asarray(shuffled))),
                  probability_true=float(probabilities[np.arange(len(truth)), truth].mean()),
                  permuted_vs_true=float(np.mean(np.asarray(shuffled) == truth)), hyperparameters=asdict(config))
    return model, record


# ----- building the permuted-label model as a cached job ------------------------------------------------------
def models_dir() -> Path:
    return settings.cache_dir() / "models" / "permuted-labels"


def build_config(model: str, classifier: TextClassifier, data: str, options: BuildOptions) -> dict:
    return {"model": model, "model_fingerprint": classifier.fingerprint, "data": data, **asdict(options)}


def folder_for(config: dict) -> Path:
    key = hashlib.sha256(json.dumps({k: v for k, v in config.items() if k != "model"}, sort_keys=True).encode())
    return models_dir() / key.hexdigest()[:16]


def find_built(model: str, data: str, options: BuildOptions = BuildOptions()) -> Path | None:
    """The folder of a finished build with these settings, or None."""
    folder = folder_for(build_config(model, cached_classifier(model), data, options))
    return folder if (folder / "manifest.json").is_file() else None


def training_data(classifier: TextClassifier, data: str | None) -> str:
    data = data or classifier.manifest.get("train_data")
    if not data:
        raise ModelError(f"'{classifier.name}' does not say which data it was trained on: name the training data "
                         f"(--data DATASET:SPLIT, e.g. sst2:train).")
    return data


def start_build(model: str, data: str | None = None, options: BuildOptions = BuildOptions(),
                store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """The one-cell run that builds (or finds) the permuted-label copy of ``model``; a finished run whose folder
    is gone is started afresh."""
    if options.steps < 1:
        raise ModelError("The number of training steps must be at least 1.")
    store = store or ResultStore()
    classifier = cached_classifier(model)
    config = build_config(model, classifier, training_data(classifier, data), options)
    title = f"permuted-label copy of {model} ({options.steps} steps on {config['data']})"
    run_id = store.create_run(BUILD_KIND, config, total=1, title=title)
    if store.cells(run_id) and not (folder_for(config) / "manifest.json").is_file():
        store.delete_run(run_id)
        run_id = store.create_run(BUILD_KIND, config, total=1, title=title)
    return store, run_id, [Cell(key="build", spec={**config, "store": str(store.path), "run_id": run_id})]


def build_cell(spec: dict) -> dict:
    """Fine-tune on permuted labels and save with a manifest (``.partial`` then renamed); progress into the run's
    meta; a Stop ends it with nothing saved."""
    classifier = cached_classifier(spec["model"])
    if classifier.fingerprint != spec["model_fingerprint"]:
        raise ModelError(f"The model '{spec['model']}' changed since the build was started; start it again.")
    options = BuildOptions(**{k: spec[k] for k in BuildOptions.__dataclass_fields__})
    target = folder_for({k: v for k, v in spec.items() if k not in ("store", "run_id")})
    if (target / "manifest.json").is_file():
        return {"folder": str(target), **json.loads((target / "manifest.json").read_text())["training"]}
    store, run_id = ResultStore(spec["store"]), spec["run_id"]
    examples = [e for e in load_dataset(spec["data"], limit=options.steps * options.batch_size,
                                        label_names=classifier.labels) if e.label is not None]
    if len(examples) < 2:
        raise ModelError(f"'{spec['data']}' has fewer than two labelled examples to train on.")
    run = store.get_run(run_id)
    if run is None:
        raise ModelError(f"The run {run_id} is no longer in the result store (deleted while it ran); start the "
                         f"build again.")
    meta, last = dict(run["meta"]), [0.0]

    def progress(step: int, total: int, info: dict) -> None:
        if time.monotonic() - last[0] < 2.0 and step < total:
            return
        last[0] = time.monotonic()
        meta["training"] = {"step": step, "total": total, "loss": info.get("loss")}
        store.set_status(run_id, "running", meta=meta)

    started = time.time()
    pairs = None
    if examples[0].pair is not None:  # the first example says whether the data are sentence pairs
        pairs = [e.pair for e in examples if e.pair is not None]
        if len(pairs) < len(examples):
            raise ModelError(f"'{spec['data']}' mixes sentence pairs and single sentences; train on one kind.")
    labels = [e.label for e in examples if e.label is not None]  # all of them: unlabelled ones were left out
    model, record = train_permuted(classifier, [e.text for e in examples], labels, options, pairs, progress,
                                   stop_requested)
    if record["stopped"]:
        raise CellStopped()
    temporary = target.with_name(target.name + ".partial")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    model.save_pretrained(temporary, safe_serialization=True)
    classifier.tokenizer.save_pretrained(temporary)
    manifest = {"description": f"{classifier.name} fine-tuned on permuted labels of {spec['data']} (data "
                               f"randomization test, {REFERENCE})",
                "source_model": spec["model"], "source_fingerprint": classifier.fingerprint,
                "weights_sha256": file_sha256(temporary / "model.safetensors"), "train_data": spec["data"],
                "train_examples": len(examples), "label_names": list(classifier.labels), "permuted_labels": True,
                "seed": options.seed, "options": asdict(options), "training": record,
                "library_versions": library_versions(), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "seconds": round(time.time() - started, 1)}
    (temporary / "manifest.json").write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(target, ignore_errors=True)
    temporary.rename(target)
    return {"folder": str(target), **record}


def build(model: str, data: str | None = None, options: BuildOptions = BuildOptions(),
          store: ResultStore | None = None, progress: Progress | None = None, should_stop=None) -> Path:
    """Build (or find) the permuted-label model now; its folder."""
    store, run_id, cells = start_build(model, data, options, store)
    summary = run_cells(store, run_id, cells, build_cell, progress=progress, should_stop=should_stop)
    if summary.errors:
        raise ModelError(f"Building the permuted-label model failed: {next(iter(summary.errors.values()))}")
    cell = store.cells(run_id).get("build")
    if cell is None or "folder" not in cell:
        raise ModelError("Building the permuted-label model was stopped; start it again to build it.")
    return Path(cell["folder"])


# ----- comparing the maps -------------------------------------------------------------------------------------
def compare_maps(original: TextClassifier, randomized: TextClassifier, encoding, methods, target: int | None = None,
                 top_fraction: float = one_input.DEFAULT_TOP_FRACTION, cache=DEFAULT_CACHE,
                 chance_draws: int = 200, seed: int = 0) -> tuple[pd.DataFrame, dict, dict[str, str]]:
    """(one row per method with the MPRT measures, the random band per measure, errors) for one input."""
    if isinstance(methods, list):
        methods = one_input.explainers_for(methods)
    if target is None:
        target = int(np.argmax(original.proba_of(encoding)))
    before = one_input.StageResult(randomize.ORIGINAL, 0, original.fingerprint, original.proba_of(encoding))
    after = one_input.StageResult(STAGE, 1, randomized.fingerprint, randomized.proba_of(encoding))
    for name, explainer in methods.items():
        one_input.explain_into(explainer, original, encoding, target, cache, before, name)
        one_input.explain_into(explainer, randomized, encoding, target, cache, after, name)
    rows = []
    for name, explainer in methods.items():
        if name in before.explanations and name in after.explanations:
            values = one_input.compare(before.explanations[name].word_scores, after.explanations[name].word_scores,
                                       explainer.is_signed(), top_fraction)
            rows.append({"method": name, **{m: values[m] for m in one_input.SIMILARITY_MEASURES}})
    rng = np.random.default_rng(seed)
    draws: dict[str, list[np.ndarray]] = {m: [] for m in one_input.SIMILARITY_MEASURES}
    for explanation in before.explanations.values():
        for measure, chance in one_input.chance_similarity(explanation.word_scores, rng, chance_draws,
                                                           top_fraction).items():
            draws[measure].append(chance)
    band = {}
    for measure, parts in draws.items():
        pooled = np.concatenate(parts) if parts else np.array([])
        pooled = pooled[np.isfinite(pooled)]
        band[measure] = ({"mean": float(pooled.mean()), "low": float(np.quantile(pooled, 0.025)),
                          "high": float(np.quantile(pooled, 0.975))} if pooled.size else
                         {"mean": float("nan"), "low": float("nan"), "high": float("nan")})
    errors = {f"{where.name} / {k}": v for where in (before, after) for k, v in where.errors.items()}
    frame = pd.DataFrame(rows, columns=["method", *one_input.SIMILARITY_MEASURES])
    return frame, band, errors


def comparison_cell(spec: dict) -> dict:
    """One example: every method on the original and the permuted-label model."""
    original = cached_classifier(spec["model"])
    randomized = cached_classifier(spec["permuted"])
    example = load_dataset(spec["dataset"], limit=spec["index"] + 1, label_names=original.labels)[spec["index"]]
    encoding = original.encode(example.text, example.pair)
    target = targets.explain_target(spec.get("target"), example.label)
    frame, band, errors = compare_maps(original, randomized, encoding, spec["methods"], target,
                                       spec.get("top_fraction", one_input.DEFAULT_TOP_FRACTION), cache=None,
                                       chance_draws=20, seed=int(spec["index"]))
    rows = [{"stage": STAGE, "stage_index": 1, "method": record["method"], "metric": MEASURES[measure],
             "value": record[measure]} for record in frame.to_dict("records") for measure in MEASURES]
    rows += [{"stage": "any", "stage_index": -1, "method": one_input.CHANCE, "metric": MEASURES[measure],
              "value": band[measure]["mean"]} for measure in MEASURES if np.isfinite(band[measure]["mean"])]
    predictions = {name: int(np.argmax(model.proba_of(encoding))) for name, model in
                   ((randomize.ORIGINAL, original), (STAGE, randomized))}
    if example.label is not None:
        rows += [{"stage": stage, "stage_index": -1, "method": "(model)", "metric": "correct",
                  "value": float(predicted == example.label)} for stage, predicted in predictions.items()]
    return {"example_id": example.id, "label": example.label, "rows": rows, "errors": errors}


def start_study(model: str, permuted_folder: str, dataset: str, methods: list[str], limit: int | None = None,
                target: str = "predicted", top_fraction: float = one_input.DEFAULT_TOP_FRACTION,
                store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    if not methods:
        raise ModelError("Choose at least one method.")
    one_input.explainers_for(methods)  # unknown methods and presets fail here, before any work
    store = store or ResultStore()
    original, randomized = cached_classifier(model), load_classifier(permuted_folder)
    examples = load_dataset(dataset, limit=limit, label_names=original.labels)
    if not examples:
        raise ModelError(f"Dataset '{dataset}' has no examples.")
    settings_ = {"model": model, "permuted": str(permuted_folder), "methods": list(methods),
                 "target": targets.parse(target), "top_fraction": top_fraction, "dataset": dataset}
    study = {k: v for k, v in settings_.items() if k not in ("model", "dataset")}  # the header holds those two
    run_id, _ = create_dataset_run(store, KIND, "data randomization", model, original.fingerprint, dataset, examples,
                                   {**study, "permuted_fingerprint": randomized.fingerprint})
    cells = [Cell(key=e.id, spec={**settings_, "index": i}) for i, e in enumerate(examples)]
    return store, run_id, cells


def run_study(model: str, permuted_folder: str, dataset: str, methods: list[str], limit: int | None = None,
              target: str = "predicted", store: ResultStore | None = None, executor: str = "local",
              progress: Progress | None = None, should_stop=None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = start_study(model, permuted_folder, dataset, methods, limit, target, store=store)
    return store, run_cells(store, run_id, cells, comparison_cell, executor=executor, progress=progress,
                            should_stop=should_stop)


def results_frame(store: ResultStore, run_id: str) -> pd.DataFrame:
    return cell_rows_frame(store, run_id, ["stage", "stage_index", "method", "metric", "value"])
