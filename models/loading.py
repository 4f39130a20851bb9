"""``load_classifier(spec)``: a built-in name, a local folder, or (opt-in) a Hugging Face hub id.

Safetensors weights only, never ``trust_remote_code``; models without a trained sequence-classification
head are refused with a message saying what to do.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import settings

from models import runtime
from models.classifier import TextClassifier
from models.errors import ModelError, ModelNotPrepared
from models.prepare import RECIPES, find_prepared, read_manifest

BUILT_IN = tuple(RECIPES)
HEAD_PREFIXES = ("classifier", "score", "pre_classifier", "logits_proj")


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
        raise ModelError(
            f"'{folder}' is a {', '.join(architectures)} without a sequence-classification head, so there is no "
            f"prediction to explain. Use a *ForSequenceClassification model (fine-tune this one first).")


def _from_pretrained(location: str, local_only: bool):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    kwargs = {"local_files_only": local_only}
    try:
        tokenizer = AutoTokenizer.from_pretrained(location, **kwargs)
        model, info = AutoModelForSequenceClassification.from_pretrained(
            location, attn_implementation="eager", use_safetensors=True, output_loading_info=True, **kwargs)
    except ValueError as error:  # unknown architecture, no safetensors file, ...
        raise ModelError(f"Cannot load '{location}' as a text classifier: {error}") from error
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


def load_classifier(spec: str, device: str | None = None) -> TextClassifier:
    """Load a classifier by built-in name, folder path or hub id (hub only with EXWB_ALLOW_HUB=1)."""
    spec = (spec or "").strip()
    if not spec:
        raise ModelError("No model given. Pick a built-in model (default) or give a folder.")
    chosen = runtime.choose_device(device)
    if spec in BUILT_IN:
        folder = find_prepared(spec)
        if folder is None:
            raise ModelNotPrepared(spec)
        manifest = read_manifest(folder)
        model, tokenizer = _from_pretrained(str(folder), local_only=True)
        return TextClassifier(model, tokenizer, name=spec, fingerprint=manifest["weights_sha256"][:16],
                              device=chosen, source=str(folder), manifest=manifest)
    path = Path(spec).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(f"'{spec}' is a file; give the folder that holds config.json and the weights.")
        _check_config(path)
        model, tokenizer = _from_pretrained(str(path), local_only=True)
        return TextClassifier(model, tokenizer, name=path.name, device=chosen, source=str(path.resolve()))
    if spec.startswith((".", "/", "~")) or spec.count("/") > 1:
        raise ModelError(f"The folder '{spec}' does not exist.")
    try:  # a hub id already in the local Hugging Face cache loads offline too
        model, tokenizer = _from_pretrained(spec, local_only=not settings.allow_hub())
    except ModelError as error:
        if settings.allow_hub():
            raise
        raise ModelError(f"'{spec}' is not a built-in model, an existing folder or a model in the local Hugging Face "
                         f"cache, and hub access is off. Give a local folder, pick one of {', '.join(BUILT_IN)}, or "
                         f"set EXWB_ALLOW_HUB=1 on a machine with internet access.") from error
    return TextClassifier(model, tokenizer, name=spec, device=chosen, source=f"hub:{spec}")


@lru_cache(maxsize=4)
def cached_classifier(spec: str, device: str | None = None) -> TextClassifier:
    """One classifier per model and process: job cells (local or on Ray workers) load models through this."""
    return load_classifier(spec, device)
