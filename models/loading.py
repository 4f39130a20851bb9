"""``load_classifier(spec)``: a built-in name, a local folder, or (opt-in) a Hugging Face hub id.

Safetensors weights only, never ``trust_remote_code``. Refused, with a message saying what to do: a folder
without config.json, a model whose architecture has no sequence-classification head (``BertModel``,
``*ForMaskedLM``, ...), and a ``*ForSequenceClassification`` checkpoint whose head weights are missing from the
file. Loaded with a warning (``TextClassifier.warnings``, shown next to every explanation and kept in its
provenance): a head whose weights are present but still at their initialization (saved before any training;
``models/untrained_head.py``).

``resolve_spec`` is the one reading of a model name, shared with the masked-LM loader (``models/mlm/loading.py``).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

from transformers import AutoModelForSequenceClassification, AutoTokenizer

import settings
from models import runtime
from models.causal_bert import causal_classes
from models.classifier import TextClassifier
from models.errors import ModelError, ModelNotPrepared
from models.prepare import RECIPES, file_sha256, find_prepared
from models.prompted import load_prompted
from models.untrained_head import HEAD_PREFIXES, untrained_head_warning

BUILT_IN = tuple(RECIPES)


# ----- one reading of a model name --------------------------------------------------------------------
@dataclass(frozen=True)
class ModelSpec:
    """Where a model name points: a prepared built-in folder, a local folder, or a hub id."""

    kind: str  # "built-in" | "folder" | "hub"
    name: str  # shown to the user
    location: str  # what from_pretrained reads
    source: str  # recorded in describe() and in provenance
    manifest: dict | None = None  # built-in models: the manifest written when they were prepared

    @property
    def local_only(self) -> bool:
        return self.kind != "hub" or not settings.allow_hub()


def resolve_spec(spec: str, built_in: Mapping[str, Callable[[], Path | None]],
                 not_prepared: Callable[[str], ModelError], what: str = "model") -> ModelSpec:
    """Read a model name: one of ``built_in`` (name -> its prepared folder or None), a folder, or a hub id."""
    spec = (spec or "").strip()
    if not spec:
        raise ModelError(f"No {what} given. Use {' or '.join(built_in)} (built in), a folder, or a hub id.")
    if spec in built_in:
        folder = built_in[spec]()
        if folder is None:
            raise not_prepared(spec)
        manifest = json.loads((folder / "manifest.json").read_text())
        return ModelSpec("built-in", spec, str(folder), str(folder), manifest)
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(f"'{spec}' is a file; give the folder that holds config.json and the weights.")
        return ModelSpec("folder", path.name, str(path), str(path.resolve()))
    if spec.startswith((".", "/", "~")) or spec.count("/") > 1:
        raise ModelError(f"The folder '{spec}' does not exist.")
    return ModelSpec("hub", spec, spec, f"hub:{spec}")


def load_resolved(spec: ModelSpec, from_pretrained: Callable[[str, bool], tuple], alternatives: str):
    """``from_pretrained(location, local_only)``; a hub id that is not in the local Hugging Face cache while hub
    access is off gets a message naming ``alternatives`` instead of the library's error."""
    try:
        return from_pretrained(spec.location, spec.local_only)
    except ModelError as error:
        if spec.kind != "hub" or settings.allow_hub():
            raise
        raise ModelError(f"'{spec.name}' is not {alternatives}, an existing folder or a model in the local Hugging "
                         f"Face cache, and hub access is off. Give a local folder, use {alternatives}, or set "
                         f"EXWB_ALLOW_HUB=1 on a machine with internet access.") from error


# ----- classifiers --------------------------------------------------------------------------------------
def _check_config(folder: Path) -> None:
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise ModelError(f"The folder '{folder}' holds no model (no config.json). Give a folder saved with "
                         f"save_pretrained(), or a built-in model: {', '.join(BUILT_IN)}.")
    try:
        config = json.loads(config_file.read_text())
    except ValueError as error:
        raise ModelError(f"'{config_file}' is not valid JSON ({error}).") from error
    architectures = config.get("architectures") or []
    if architectures and not any(a.endswith("ForSequenceClassification") for a in architectures):
        causal_lm = any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures)
        raise ModelError(
            f"'{folder}' is a {', '.join(architectures)} without a sequence-classification head, so there is no "
            f"prediction to explain. Use a *ForSequenceClassification model (fine-tune this one first)"
            + ("; a causal language model can classify only through a prompt, which is not supported yet."
               if causal_lm else "."))


def _from_pretrained(location: str, local_only: bool):
    kwargs = {"local_files_only": local_only}
    causal_classes()  # a saved causal-bert folder needs its classes registered with the Auto classes
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, **kwargs)
        model, info = AutoModelForSequenceClassification.from_pretrained(
            location, attn_implementation="eager", use_safetensors=True, output_loading_info=True, **kwargs)
    except ValueError as error:  # unknown architecture, no safetensors file, ...
        # transformers' messages span several lines: one line for the user
        raise ModelError(f"Cannot load '{location}' as a text classifier: {' '.join(str(error).split())}") from error
    except OSError as error:
        raise ModelError(f"Cannot load '{location}': {str(error).splitlines()[0]}") from error
    missing_head = sorted(k for k in info.get("missing_keys", ()) if k.split(".")[0] in HEAD_PREFIXES)
    if missing_head:
        raise ModelError(f"'{location}' has no trained classification head (missing: {', '.join(missing_head)}); its "
                         f"predictions would be random. Fine-tune it first, or pick another model.")
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"'{location}' has only a slow (Python) tokenizer; word alignment needs a fast one "
                         f"(tokenizer.json).")
    return model, tokenizer


def files_fingerprint(folder: Path) -> str | None:
    """The sha256 of the folder's safetensors weights, as ``prepare`` writes it into a built-in model's manifest
    (``weights_sha256``): the same weights get the same fingerprint by name and by path. Sharded weights: the hash
    of the shards' hashes in name order. None when the folder has no safetensors file (the classifier then hashes
    its state dict)."""
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    if len(files) == 1:
        return file_sha256(files[0])[:16]
    return hashlib.sha256(" ".join(file_sha256(f) for f in files).encode()).hexdigest()[:16]


def load_classifier(spec: str, device: str | None = None) -> TextClassifier:
    """Load a classifier by built-in name, folder path or hub id (hub only with EXWB_ALLOW_HUB=1), or a prompted
    causal LM described by a JSON file (``models/prompted.py``)."""
    if spec.endswith(".json") and Path(spec).is_file():
        return load_prompted(Path(spec), runtime.choose_device(device))
    resolved = resolve_spec(spec, {name: partial(find_prepared, name) for name in BUILT_IN},
                            ModelNotPrepared)
    chosen = runtime.choose_device(device)
    if resolved.kind == "folder":
        _check_config(Path(resolved.location))
    model, tokenizer = load_resolved(resolved, _from_pretrained, f"a built-in model ({', '.join(BUILT_IN)})")
    warning = untrained_head_warning(model)
    # content, not the path: a prepared model named by its folder hits the cache its name filled
    if resolved.manifest:
        fingerprint = resolved.manifest["weights_sha256"][:16]
    else:
        fingerprint = files_fingerprint(Path(resolved.location)) if resolved.kind == "folder" else None
    return TextClassifier(model, tokenizer, name=resolved.name, fingerprint=fingerprint, device=chosen,
                          source=resolved.source, manifest=resolved.manifest,
                          warnings=(warning,) if warning else ())


@lru_cache(maxsize=4)
def cached_classifier(spec: str, device: str | None = None) -> TextClassifier:
    """One classifier per model and process: job cells (local or on Ray workers) load models through this."""
    return load_classifier(spec, device)
