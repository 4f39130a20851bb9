"""Cached AML attribution models: one folder per explained model (by weights fingerprint) and selection metric.

``<cache>/models/aml-<fingerprint>-<metric>/`` holds ``attribution_model.safetensors`` and ``manifest.json``
(the explained model's name and fingerprint, data hashes, lambdas, the metric and validation score, seconds).
An AML trained against one model explains that model only: a checkpoint is refused for any other fingerprint,
unless the caller names the model it was trained for (``source_fingerprint``, e.g. the sanity page explaining a
randomized copy with the original model's G), and then the explanation says so.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import threading
from pathlib import Path

from safetensors.torch import load_file, save_file

from explainers.mask_learning.aml_model import AttributionModel, prediction_slot_of
from explainers.mask_learning.selection import SelectionMetric
from models import BUILT_IN, ModelError, TextClassifier
from models.prepare import models_dir

WEIGHTS = "attribution_model.safetensors"
MANIFEST = "manifest.json"


class AMLNotPrepared(ModelError):
    """No attribution model was trained for this model and metric yet."""


def checkpoint_folder(fingerprint: str, metric: SelectionMetric) -> Path:
    return models_dir() / f"aml-{fingerprint}-{metric.name}"


def find_checkpoint(fingerprint: str, metric: SelectionMetric) -> Path | None:
    folder = checkpoint_folder(fingerprint, metric)
    return folder if (folder / MANIFEST).is_file() else None


def read_manifest(folder: Path) -> dict:
    return json.loads((Path(folder) / MANIFEST).read_text())


def save_checkpoint(model: AttributionModel, manifest: dict, folder: Path) -> Path:
    """Write to ``<folder>.partial`` and rename, so a stopped run leaves nothing half-made."""
    folder = Path(folder)
    temporary = folder.with_name(folder.name + ".partial")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(temporary / WEIGHTS))
    # the weights' hash names this checkpoint in every explanation's cache key: a rebuild is never served stale
    manifest = {**manifest, "weights_sha256": hashlib.sha256((temporary / WEIGHTS).read_bytes()).hexdigest()}
    (temporary / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str))
    shutil.rmtree(folder, ignore_errors=True)
    temporary.rename(folder)
    with _lock:
        _loaded.pop(str(folder), None)
    return folder


_lock = threading.Lock()
_loaded: dict[str, tuple[float, AttributionModel]] = {}


def load_attribution_model(classifier: TextClassifier, folder: Path) -> AttributionModel:
    """G from a checkpoint, built on the classifier's architecture (kept in memory per folder)."""
    folder = Path(folder)
    stamp = (folder / WEIGHTS).stat().st_mtime
    key = f"{folder}|{classifier.fingerprint}"
    with _lock:
        hit = _loaded.get(key)
        if hit is not None and hit[0] == stamp:
            return hit[1]
    manifest = read_manifest(folder)
    slot = manifest.get("prediction_slot", "after")  # checkpoints from before the slot was recorded: "after"
    if slot != prediction_slot_of(classifier):  # a causal model's G built before z_v moved first: it ignores y_v
        raise ModelError(f"The AML checkpoint in {folder} was built with the prediction encoding {slot} the input; "
                         f"'{classifier.name}' needs it {prediction_slot_of(classifier)}: rebuild it with "
                         f"`python cli.py prepare-aml --model {model_argument(classifier)} --force`.")
    model = AttributionModel.from_classifier(classifier, dropout=float(manifest.get("recipe", {}).get("dropout", 0.1)))
    try:
        model.load_state_dict(load_file(str(folder / WEIGHTS), device=str(classifier.device)))
    except RuntimeError as error:
        raise ModelError(f"The AML checkpoint in {folder} does not fit '{classifier.name}' (another architecture?). "
                         f"Build one for it with `python cli.py prepare-aml --model ...`.") from error
    model.eval().requires_grad_(False)  # shared and read-only: fAML trains a copy (mask_learning/finetune.py)
    with _lock:
        _loaded[key] = (stamp, model)
    return model


def model_argument(classifier: TextClassifier) -> str:
    """How a command line names this classifier: a built-in's name, otherwise the folder (or hub id) it came from."""
    return classifier.name if classifier.name in BUILT_IN or not classifier.source else classifier.source


def resolve_checkpoint(classifier: TextClassifier, metric: SelectionMetric, checkpoint: str = "",
                       source_fingerprint: str = "") -> tuple[Path, dict, list[str]]:
    """(folder, manifest, warnings) of the G that may explain this classifier, or a clear refusal."""
    warnings: list[str] = []
    if checkpoint:
        folder = Path(checkpoint).expanduser()
        if not (folder / MANIFEST).is_file():
            raise ModelError(f"There is no AML checkpoint (manifest.json) in {folder}.")
    else:
        wanted = source_fingerprint or classifier.fingerprint
        found = find_checkpoint(wanted, metric)
        if found is None:
            raise AMLNotPrepared(
                f"No AML attribution model tuned for {metric.name} exists for '{classifier.name}' (fingerprint "
                f"{wanted}). Build it once with `python cli.py prepare-aml --model {model_argument(classifier)} --tune "
                f"{metric.name}` (minutes on a CPU).")
        folder = found
    manifest = read_manifest(folder)
    trained_for = manifest.get("explained_model", {}).get("fingerprint")
    if trained_for != classifier.fingerprint:
        if source_fingerprint and trained_for == source_fingerprint:
            warnings.append(f"Explained with the AML attribution model trained for the model with fingerprint "
                            f"{trained_for}, not for this one ({classifier.fingerprint}).")
        else:
            trained_name = manifest.get("explained_model", {}).get("name", "another model")
            raise ModelError(f"This AML attribution model was trained to explain '{trained_name}' (fingerprint "
                             f"{trained_for}); the model here is '{classifier.name}' (fingerprint "
                             f"{classifier.fingerprint}). An AML explains only the model it was trained on: build one "
                             f"for this model with `python cli.py prepare-aml`.")
    return folder, manifest, warnings
