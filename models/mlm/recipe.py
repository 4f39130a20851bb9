"""The offline masked LM's recipe and where its prepared copy lives (``<cache>/models/mlm-<recipe hash>/``).

The recipe's hash names the folder, so a changed recipe is a new model; ``models/mlm/prepare.py`` builds it.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from models.prepare import base_version, models_dir


@dataclass(frozen=True)
class MLMRecipe:
    name: str = "mlm"
    description: str = ("MiniLM-L6 fine-tuned as a masked LM with a new head on the local corpora "
                        "(a small stand-in for bert-base-uncased)")
    train_data: tuple[str, ...] = ("sst2:train", "eraser-movies:train", "snli:test")
    eval_data: tuple[str, ...] = ("sst2:dev", "snli:dev")
    eval_limit: int = 200  # sentences (or pairs) per evaluation dataset
    train_limit: int | None = None  # sentences, for quick builds and tests
    trainable_layers: int = 6  # the top MiniLM blocks trained with the head (0 = head only, 6 = all)
    train_embeddings: bool = False  # also the embeddings (the word embeddings are the tied decoder's weights)
    continue_from: str = ""  # a recipe's name: start from its prepared weights instead of a new head
    steps: int = 300
    batch_size: int = 32
    lr: float = 3e-4  # the transformer blocks
    head_lr: float = 2e-3  # the new masked-LM head
    unigram_bias: bool = True  # start the output bias at the log word frequencies of the training text
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_length: int = 64
    single_mask_share: float = 0.3  # share of training sentences with exactly one masked word
    max_mask_fraction: float = 0.4  # the others: up to this fraction of their words masked
    masking: str = "words"  # "words": the two shares above; "bert-15": BERT's 15 % of words, 80/10/10
    checkpoint_every: int = 0  # steps between resumable checkpoints (0: none; a stopped run starts again)
    seed: int = 0
    notes: tuple[str, ...] = field(default_factory=lambda: (
        "A small stand-in for bert-base-uncased (paper 000's masked LM): 6 layers, 384 hidden units, trained for "
        "minutes on a CPU on about 10k sentence samples. Its candidates are less fluent than BERT's; use "
        "bert-base-uncased (EXWB_ALLOW_HUB=1) to reproduce the paper's numbers.",))

    @property
    def key(self) -> str:
        # A field added after a recipe was published is left out while it holds its default, so the recipes
        # built before it keep their folder (and CI's prepared ``mlm`` stays found).
        fields = {name: value for name, value in asdict(self).items()
                  if not (name in _ADDED_LATER and value == _ADDED_LATER[name])}
        if self.continue_from:  # the starting weights are part of what this recipe makes
            fields["continue_from"] = f"{self.continue_from}-{RECIPES[self.continue_from].key}"
        payload = json.dumps({**fields, "base": base_version()}, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:10]


_ADDED_LATER = {"train_embeddings": False, "continue_from": "", "masking": "words", "checkpoint_every": 0}

RECIPE = MLMRecipe()

# ``mlm`` trained further: from its prepared weights, every layer now including the embeddings, on the
# text of every local corpus with sentences except MR (it holds the SST-2 dev and test sentences) and the SST
# trees (the SST-2 training sentences again), for 200 more steps. Budget: about 10 CPU-minutes (2.6 CPU-s a step,
# measured on one thread).
PLUS_RECIPE = MLMRecipe(
    name="mlm-plus",
    description=("'mlm' trained further as a masked LM (all layers and the embeddings, every local corpus with "
                 "sentences, 200 more steps): a stronger offline stand-in for bert-base-uncased"),
    train_data=("sst2:train", "eraser-movies:train", "eraser-movies:validation", "eraser-movies:test",
                "snli:test", "snli:dev", "esnli-highlights:train"),
    train_embeddings=True,
    continue_from="mlm",
    steps=200,
    notes=("A stronger stand-in for bert-base-uncased than 'mlm': 'mlm' (6 layers, 384 hidden units) trained 200 "
           "more steps of 32 sentences on every layer, the embeddings included, on every local corpus with "
           "sentences (the held-out SST-2 dev and SNLI dev inputs are removed from the training text).",))

# ``mlm`` trained much longer with BERT's own masking: from its prepared weights, every layer (the embeddings and
# the tied decoder included), the text of mlm-plus, 15 % of the words masked 80/10/10 (Devlin et al. 2019,
# section 3.1), linear warm-up and decay, a checkpoint every 100 steps (a stopped run resumes). Its cost and
# learning curve on the 2-core CPU are in docs/masked-lm.md; the run is meant for a GPU or a long CPU session.
LONG_RECIPE = MLMRecipe(
    name="mlm-long",
    description=("'mlm' trained much longer as a masked LM (all layers and the embeddings, every local corpus with "
                 "sentences, BERT's 15 % 80/10/10 masking): the offline stand-in meant to come closest to "
                 "bert-base-uncased"),
    train_data=PLUS_RECIPE.train_data,
    train_embeddings=True,
    continue_from="mlm",
    steps=2000,
    lr=2e-4,
    head_lr=2e-4,  # the head is trained already: no faster rate
    masking="bert-15",
    checkpoint_every=100,
    notes=("A stand-in for bert-base-uncased: 'mlm' (6 layers, 384 hidden units) trained 2,000 more steps of 32 "
           "sentences on every layer with BERT's 15 % 80/10/10 masking, on every local corpus with sentences "
           "(the held-out SST-2 dev and SNLI dev inputs are removed from the training text).",))

RECIPES = {recipe.name: recipe for recipe in (RECIPE, PLUS_RECIPE, LONG_RECIPE)}


def mlm_folder(recipe: MLMRecipe = RECIPE) -> Path:
    return models_dir() / f"{recipe.name}-{recipe.key}"


def checkpoint_folder(recipe: MLMRecipe = RECIPE) -> Path:
    """Where a resumable run of ``recipe`` keeps its checkpoint until its model is saved."""
    return models_dir() / f"{recipe.name}-{recipe.key}.checkpoint"


def find_prepared_mlm(recipe: MLMRecipe = RECIPE) -> Path | None:
    folder = mlm_folder(recipe)
    return folder if (folder / "manifest.json").is_file() else None


def read_mlm_manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


def headline_accuracy(manifest: dict) -> tuple[float | None, float | None, str | None]:
    """(top-1, top-10, dataset) of the first evaluation set in a manifest, for captions."""
    for dataset_id, result in (manifest.get("evaluation") or {}).items():
        return result.get("top1_accuracy"), result.get("top10_accuracy"), dataset_id
    return None, None, None
