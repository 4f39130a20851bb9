"""The models of a reproduce run, one per training seed: intervals over independently trained models.

Each is a recipe of ``models/prepare.py`` (or the known-feature task's, paper 003 s. 3.1) with the budget's size and
the seed in its training config, built once and cached by the recipe's key, so a resumed run or another paper
reuses it. A lock file keeps two cells from training the same model at once (processes executor).
"""
from __future__ import annotations

from dataclasses import replace

from corpora import load_dataset
from evaluation.faithfulness import known_feature
from evaluation.reproduce.findings import Budget
from models.file_lock import exclusive
from models.prepare import RECIPES, Recipe, finetune_and_save, models_dir, read_manifest
from models.training import TrainConfig

EVAL_LIMIT = {"tiny": 64, "quick": 400}  # held-out sentences for the manifest's accuracy (all under "full")


def _lock(name: str):
    return exclusive(models_dir() / f".{name}.lock")


def _train_config(budget: Budget, seed: int) -> TrainConfig:
    # word embeddings frozen, as default-quick's recipe: with a few hundred steps the small models learn
    return TrainConfig(epochs=budget.epochs, lr=budget.lr, batch_size=32, max_length=budget.max_length, seed=int(seed),
                       freeze_word_embeddings=budget.train_limit is not None)


def sst_recipe(budget: Budget, seed: int, blocks: int | None = None, causal: bool = False) -> Recipe:
    """An SST-2 sentiment classifier of the budget's size (``blocks`` overrides the budget's), trained with ``seed``."""
    base = RECIPES["minilm-causal" if causal else "default"]
    blocks = budget.blocks if blocks is None else blocks
    shape = (f"-l{blocks}" if blocks else "") + ("-causal" if causal else "")
    return replace(base, name=f"reproduce{shape}-{budget.name}-seed{seed}",
                   description=f"{base.description}; reproduce budget '{budget.name}', training seed {seed}",
                   train=_train_config(budget, seed), train_limit=budget.train_limit, blocks=blocks, causal=causal)


def sst_model(budget: Budget, seed: int, blocks: int | None = None, causal: bool = False, log=print) -> str:
    """The folder of the seeded classifier (trained now if missing)."""
    recipe = sst_recipe(budget, seed, blocks, causal)
    target = models_dir() / f"{recipe.name}-{recipe.key}"
    with _lock(target.name):
        if not (target / "manifest.json").is_file():
            train = load_dataset(recipe.train_data)[: recipe.train_limit or None]
            held_out = load_dataset(recipe.eval_data)[: EVAL_LIMIT.get(budget.name) or None]
            log(f"training {recipe.name} on {len(train)} sentences (seed {seed})")
            finetune_and_save(target, recipe.description, train, held_out, list(recipe.label_names), recipe.train,
                              {"name": recipe.name, "recipe_key": recipe.key, "train_data": recipe.train_data,
                               "eval_data": recipe.eval_data, "train_limit": recipe.train_limit,
                               "blocks": recipe.blocks, "causal": recipe.causal, "reproduce_seed": int(seed)})
    return str(target)


def known_feature_recipe(budget: Budget, seed: int, blocks: int | None = None,
                         causal: bool = False) -> known_feature.KnownFeatureRecipe:
    """Paper 003's known-feature model (random labels, the label word appended) of the budget's size and seed."""
    base = known_feature.RECIPE
    limit = base.train_limit if budget.train_limit is None else min(base.train_limit, budget.train_limit)
    return replace(base, train=_train_config(budget, seed), train_limit=limit,
                   eval_limit=min(base.eval_limit, EVAL_LIMIT.get(budget.name, base.eval_limit)),
                   blocks=budget.blocks if blocks is None else blocks, causal=causal)


def known_feature_model(budget: Budget, seed: int, blocks: int | None = None, causal: bool = False,
                        log=print) -> str:
    recipe = known_feature_recipe(budget, seed, blocks, causal)
    with _lock(known_feature.model_dir(recipe).name):
        return str(known_feature.prepare_known_feature_model(recipe, log=log))


def trained_models(budget: Budget) -> list[dict]:
    """The seeded models of a budget built so far (this budget's recipes only), with their held-out accuracy from
    their manifests: the page lists them, since a model near chance makes every finding measured on it say little."""
    shapes = {(budget.blocks, False)} | {(blocks, False) for blocks in budget.zoo_blocks}
    if budget.causal:
        shapes |= {(budget.zoo_blocks[0], True)}
    found = []
    for seed in budget.seeds:
        for blocks, causal in sorted(shapes, key=str):
            recipe = sst_recipe(budget, seed, blocks, causal)
            folder = models_dir() / f"{recipe.name}-{recipe.key}"
            twin = known_feature_recipe(budget, seed, blocks, causal)
            for task, path in (("SST-2", folder), ("known feature", known_feature.model_dir(twin))):
                if (path / "manifest.json").is_file():
                    manifest = read_manifest(path)
                    found.append({"model": path.name, "seed": seed, "task": task, "accuracy": manifest["accuracy"],
                                  "eval_examples": manifest["eval_examples"]})
    return found
