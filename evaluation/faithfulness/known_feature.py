"""The known-feature task of paper 003 (s. 3.1): ground-truth metrics and the small model trained on it.

Metrics per explanation, against the one known feature (the appended label word, ``corpora.known_feature``):
- ground-truth overlap = precision@k: |top-k(A) ∩ GT| / k with k = |GT| (paper 003's code; = the thesis'
  exact-set "GT Overlap" for k = 1),
- mean rank: the smallest r with GT ⊆ top-r(A) (Bastings et al.), and mean rank fraction r / n (the thesis'
  "Mean Rank %", n = words, + special tokens when they are counted),
- ground-truth mass: Σ_GT |a| / Σ |a| (paper 003's code, not reported there).

Reference behaviour (paper 003 s. 4.1.1, Fig. 4.1): IG, LIME and KernelSHAP ≈ 1.0 overlap and rank % ≈ 1/n;
gradient and gradient × input "only slightly" better than random (random: overlap 1/n, rank % ≈ (n+1)/2n).

The model: the bundled MiniLM fine-tuned (``models.training``) on the task built from SST-2 train, cached
under ``<cache>/models/known-feature-<recipe hash>/`` with a manifest like the built-in models.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from corpora import load_dataset
from corpora.known_feature import LABEL_WORDS, make_known_feature
from evaluation.faithfulness.curves import RemovalOptions, rank_words
from evaluation.metric import EVALUATORS, Evaluator, Metric, MetricValues, register_evaluator
from evaluation.statistics import bootstrap_ci
from explainers import create_from_spec, is_known_spec, split_spec
from explainers.cache import explain_cached
from explainers.params import options_from
from models import ModelError, TextClassifier, load_classifier
from models.prepare import RECIPES, ZOO_FIELDS, base_version, finetune_and_save, models_dir
from models.training import TrainConfig

# paper 003 s. 2.2.2: the methods it compares, with its presets
PAPER_003_METHODS = ("integrated_gradients:paper-003", "lime:paper-003", "kernel_shap:paper-003",
                     "saliency:paper-003", "input_x_gradient:paper-003", "attention:paper-003-average")


def paper_003_methods() -> list[str]:
    """Paper 003's methods with its presets; a method without the preset here runs with its defaults."""
    chosen = []
    for spec in PAPER_003_METHODS:
        method, _ = split_spec(spec)
        if is_known_spec(spec):
            chosen.append(spec)
        elif is_known_spec(method):
            chosen.append(method)
    return chosen

REFERENCE = "paper 003 s. 2.2.3.1 and 3.1 (augmented SST; code metrics.ground_truth_overlap)"

GT_METRICS = (
    Metric("known-feature.precision@k", "Ground-truth overlap (precision@k)", "faithfulness", True, (0.0, 1.0),
           "Share of the k known-feature words among the method's top-k words (k = number of ground-truth words).",
           REFERENCE, preset="paper-003"),
    Metric("known-feature.rank", "Mean rank of the known feature", "faithfulness", False, (1.0, None),
           "Smallest r such that every ground-truth word is in the method's top r (1 = ranked first).",
           REFERENCE + "; Bastings et al. 2022", preset="paper-003"),
    Metric("known-feature.rank-fraction", "Mean rank % of the known feature", "faithfulness", False, (0.0, 1.0),
           "The mean rank divided by the input length: the share of the ranking needed to recover the feature.",
           REFERENCE, preset="paper-003"),
    Metric("known-feature.mass", "Ground-truth mass", "faithfulness", True, (0.0, 1.0),
           "Σ |score| on the ground-truth words / Σ |score| over all words.", REFERENCE, preset="paper-003"),
)


def ground_truth_metrics(scores, rationale, seed: int = 0, rank_by: str = "signed", n_units: int | None = None) -> dict:
    """precision@k, rank, rank fraction and mass of one explanation against a 0/1 ground-truth word mask.

    Ranking is by signed score (paper 003 ranks signed values) with seeded tie-breaking; empty masks give {}.
    """
    scores = np.asarray(scores, dtype=np.float64)
    truth = np.flatnonzero(np.asarray(rationale, dtype=int)[: len(scores)])
    if truth.size == 0:
        return {}
    order = rank_words(scores, seed, rank_by)
    position = np.empty(len(order), dtype=int)
    position[order] = np.arange(1, len(order) + 1)
    k = truth.size
    rank = int(position[truth].max())
    total = np.abs(scores).sum()
    return {"known-feature.precision@k": float(np.isin(order[:k], truth).sum() / k),
            "known-feature.rank": float(rank),
            "known-feature.rank-fraction": float(rank / (n_units or len(scores))),
            "known-feature.mass": float(np.abs(scores[truth]).sum() / total) if total > 0 else 0.0}


def _compute(classifier, encoding, explanation, example, options) -> MetricValues:
    removal = options_from(RemovalOptions, options)
    units = encoding.n_words + (0 if removal.exclude_special else sum(encoding.special))
    values = ground_truth_metrics(explanation.word_scores, example.rationale, removal.seed, removal.rank_by, units)
    return MetricValues(values, details={"reference": REFERENCE, "tie_break_seed": removal.seed,
                                         "rank_by": removal.rank_by})


KNOWN = "known-feature"
if KNOWN not in EVALUATORS:
    register_evaluator(Evaluator(id=KNOWN, label="Known-feature task (paper 003): overlap, rank, mass",
                                 metrics=GT_METRICS, compute=_compute, needs_rationale=True))


# ----- the model ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class KnownFeatureRecipe:
    """MiniLM fine-tuned on the known-feature task (a few minutes on two CPU cores)."""

    train_data: str = "sst2:train"
    train_limit: int = 1600
    eval_data: str = "sst2:dev"
    eval_limit: int = 400
    label_seed: int = 0
    label_words: tuple[str, str] = LABEL_WORDS
    train: TrainConfig = TrainConfig(epochs=1.0, lr=1e-4, batch_size=32, max_length=64, seed=0)
    blocks: int | None = None  # a zoo member's shape (models.prepare.Recipe): its known-feature twin
    causal: bool = False

    @property
    def key(self) -> str:
        fields = {k: v for k, v in asdict(self).items() if not (k in ZOO_FIELDS and v == ZOO_FIELDS[k])}
        payload = json.dumps({**fields, "base": base_version()}, sort_keys=True, default=str)
        return hashlib.sha256(payload.encode()).hexdigest()[:10]


RECIPE = KnownFeatureRecipe()


def recipe_for(model: str) -> KnownFeatureRecipe | None:
    """The known-feature recipe of a built-in model's shape (blocks, causal), or None for any other model."""
    if model not in RECIPES:
        return None
    return replace(RECIPE, blocks=RECIPES[model].blocks, causal=RECIPES[model].causal)


def model_dir(recipe: KnownFeatureRecipe = RECIPE) -> Path:
    shape = (f"-l{recipe.blocks}" if recipe.blocks else "") + ("-causal" if recipe.causal else "")
    return models_dir() / f"{KNOWN}{shape}-{recipe.key}"


def is_prepared(recipe: KnownFeatureRecipe = RECIPE) -> bool:
    return (model_dir(recipe) / "manifest.json").is_file()


def _examples(recipe: KnownFeatureRecipe, data: str, limit: int):

    return make_known_feature(load_dataset(data)[:limit], seed=recipe.label_seed, label_words=recipe.label_words)


def prepare_known_feature_model(recipe: KnownFeatureRecipe = RECIPE, force: bool = False,
                                progress: Callable[[int, int, dict], None] | None = None,
                                should_stop: Callable[[], bool] | None = None,
                                log: Callable[[str], None] = print) -> Path:
    """Train (or find) the known-feature model; written to a temporary folder and renamed when complete."""
    target = model_dir(recipe)
    if is_prepared(recipe) and not force:
        return target
    train = _examples(recipe, recipe.train_data, recipe.train_limit)
    evaluation = _examples(recipe, recipe.eval_data, recipe.eval_limit)
    log(f"Training the known-feature model on {len(train)} SST-2 sentences with random labels and the label word "
        f"appended (label seed {recipe.label_seed}).")
    manifest = finetune_and_save(
        target, "MiniLM-L6" + (f" (first {recipe.blocks} blocks)" if recipe.blocks else "")
        + (" with causal attention" if recipe.causal else "") + " fine-tuned on the known-feature task (paper 003 s. 3.1)",
        train, evaluation,
        list(recipe.label_words), recipe.train,
        {"name": KNOWN, "recipe": {**asdict(recipe), "train": recipe.train.to_dict()}, "recipe_key": recipe.key,
         "blocks": recipe.blocks, "causal": recipe.causal,
         "eval_data": f"known-feature from {recipe.eval_data}",
         "notes": ["Labels are random, so the appended word is the only predictive feature."]},
        progress=progress, should_stop=should_stop)
    accuracy = manifest["accuracy"]
    log(f"Known-feature model: accuracy {accuracy:.1%} on {len(evaluation)} held-out task sentences; saved to "
        f"{target} in {manifest['seconds']:.0f} s.")
    return target


def load_known_feature_classifier(recipe: KnownFeatureRecipe = RECIPE) -> TextClassifier:
    if not is_prepared(recipe):
        raise ModelError("The known-feature model is not trained yet. Train it with `python cli.py known-feature "
                         "--prepare` (a few minutes on a CPU) or from the Faithfulness page.")
    return load_classifier(str(model_dir(recipe)))


def read_manifest(recipe: KnownFeatureRecipe = RECIPE) -> dict:
    return json.loads((model_dir(recipe) / "manifest.json").read_text())


# ----- the study ----------------------------------------------------------------------------------------
def known_feature_table(examples, classifier: TextClassifier, methods: list[str], seed: int = 0,
                        explain: Callable | None = None, progress: Callable[[int, int], None] | None = None):
    """Per method: mean precision@k, rank, rank fraction, mass (bootstrap CIs) over the examples, plus the
    random-ranking expectation. ``explain(method_spec, encoding)`` returns an Explanation (default: cached)."""
    if explain is None:
        def explain(method_spec, encoding):
            return explain_cached(create_from_spec(method_spec), classifier, encoding, None)

    per_example = []
    for index, example in enumerate(examples):
        encoding = classifier.encode(example.text)
        if encoding.n_words != len(example.rationale):
            continue  # truncated: the appended word is gone
        for method in methods:
            values = ground_truth_metrics(explain(method, encoding).word_scores, example.rationale, seed)
            per_example += [{"example_id": example.id, "method": method, "metric": k, "value": v}
                            for k, v in values.items()]
        n = encoding.n_words
        per_example += [{"example_id": example.id, "method": "random (expected)", "metric": k, "value": v}
                        for k, v in {"known-feature.precision@k": 1 / n, "known-feature.rank": (n + 1) / 2,
                                     "known-feature.rank-fraction": (n + 1) / (2 * n),
                                     "known-feature.mass": 1 / n}.items()]
        if progress is not None:
            progress(index + 1, len(examples))
    frame = pd.DataFrame(per_example)
    rows = []
    for (method, metric), group in frame.groupby(["method", "metric"], sort=False):
        estimate = bootstrap_ci(group["value"].to_numpy(), seed=seed)
        rows.append({"method": method, "metric": metric, "mean": estimate.mean, "low": estimate.low,
                     "high": estimate.high, "n": estimate.n})
    return pd.DataFrame(rows), frame
