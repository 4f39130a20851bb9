"""known-feature-long from the app and the CLI alike: the document twin's recipe, its build as a one-cell run of the
job runner (progress, Stop: nothing saved), and the check on documents read in windows with what it finds.

The document twin (``models/document_twin.py``) is a built-in model's short known-feature twin fine-tuned on
``known-feature-long`` documents; the check is the known-feature evaluator (paper 003 s. 3.1) on
``known-feature-long:dev``, each document read whole in windows. ``EXWB_KF_LONG_BUDGET`` ("train_limit=6,
eval_limit=4") shrinks the recipe for tests and demos, as ``EXWB_AML_BUDGET`` does for AML.
"""
from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

import settings
from corpora import load_dataset
from evaluation.faithfulness.known_feature import KNOWN, is_prepared, model_dir, recipe_for
from evaluation.metric import RANDOM_METHOD
from evaluation.runs.jobs import Cell, CellStopped, stop_requested
from evaluation.runs.store import ResultStore, run_id_for
from evaluation.suite.aml_build import progress_writer
from evaluation.suite.recipe_budget import with_budget
from evaluation.suite.runner import start_evaluation
from explainers import create_from_spec
from explainers.plan import estimate as method_estimate
from models import ModelError, UserFacingError, cached_classifier
from models.document_twin import DocumentTwinRecipe, prepare_document_twin, read_manifest, twin_dir
from models.prepare import RECIPES
from models.training import TrainConfig
from models.windows import encode_document

KIND = "known-feature-long-build"
BUDGET_ENV = "EXWB_KF_LONG_BUDGET"
DATASET = "known-feature-long:dev"
RANDOM_ORDERINGS = 10  # what `cli.py known-feature` has always used
ESTIMATE_DOCUMENTS = 5  # documents the check's estimate is averaged over
RANK = f"{KNOWN}.rank-fraction"
PRECISION = f"{KNOWN}.precision@k"  # one planted word: precision@1


def short_twin(model: str = "default") -> Path:
    """The folder of the built-in ``model``'s short known-feature twin (trained or not)."""
    recipe = recipe_for(model)
    if recipe is None:
        raise UserFacingError(f"The document twin is built from a built-in model's known-feature twin; '{model}' is "
                              f"not one ({', '.join(RECIPES)}).")
    return model_dir(recipe)


def short_twin_missing(model: str = "default") -> str | None:
    """Why the document twin cannot be built yet (its short twin is not trained), or None."""
    recipe = recipe_for(model)
    if recipe is not None and is_prepared(recipe):
        return None
    short_twin(model)  # a model that is not built in: its own message
    return (f"The document twin starts from the known-feature twin of '{model}' (trained on sentences), which is not "
            f"trained yet. Train it first: choose the sentence task here and click 'Train the known-feature model', "
            f"or run `python cli.py known-feature --prepare`.")


def document_recipe(model: str = "default") -> DocumentTwinRecipe:
    """The document twin's recipe for ``model``'s short twin; ``EXWB_KF_LONG_BUDGET`` overrides its numbers."""
    recipe = DocumentTwinRecipe(source=short_twin(model).name)
    return with_budget(recipe, settings.kf_long_budget(), BUDGET_ENV)


def recipe_from(spec: dict) -> DocumentTwinRecipe:
    """A recipe written into a cell's spec (``asdict``) read back."""
    return DocumentTwinRecipe(**{**spec, "train": TrainConfig(**spec["train"])})


def build_run_id(recipe: DocumentTwinRecipe) -> str:
    """The id of this recipe's build run, whether it was started or not (nothing is written)."""
    return run_id_for(KIND, {"recipe": asdict(recipe), "key": recipe.key})


def start_build(recipe: DocumentTwinRecipe, estimated_seconds: float | None = None,
                store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """The run (one cell) that builds the document twin; a finished run whose twin is gone is started afresh."""
    store = store or ResultStore()
    config = {"recipe": asdict(recipe), "key": recipe.key}
    meta = {"estimated_cell_seconds": estimated_seconds} if estimated_seconds else {}
    title = f"known-feature-long document twin of {recipe.source}"
    run_id = store.create_run(KIND, config, total=1, meta=meta, title=title)
    if store.cells(run_id) and not twin_dir(recipe).joinpath("manifest.json").is_file():
        store.delete_run(run_id)
        run_id = store.create_run(KIND, config, total=1, meta=meta, title=title)
    cell = Cell(key="build", spec={"recipe": asdict(recipe), "store": str(store.path), "run_id": run_id})
    return store, run_id, [cell]


def build_cell(spec: dict) -> dict:
    """Fine-tune (or find) the document twin; training steps into the run's meta; a Stop ends it, nothing saved
    (``prepare_document_twin`` writes to a temporary folder only once training has finished)."""
    store, run_id = ResultStore(spec["store"]), spec["run_id"]
    try:
        folder = prepare_document_twin(recipe_from(spec["recipe"]), progress=progress_writer(store, run_id),
                                       should_stop=stop_requested, log=lambda _: None)
    except ModelError:
        if stop_requested():
            raise CellStopped() from None
        raise
    manifest = read_manifest(recipe_from(spec["recipe"]))
    return {"folder": str(folder), "accuracy": manifest["accuracy"], "source_accuracy": manifest["source_accuracy"],
            "seconds": manifest.get("seconds")}


# ----- the check on documents ---------------------------------------------------------------------------
def check_options(seed: int = 0) -> dict:
    return {"seed": seed, "random_orderings": RANDOM_ORDERINGS}


def start_check(model: str, methods: list[str], limit: int | None, seed: int = 0,
                store: ResultStore | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """The known-feature run of ``model`` (the document twin's folder) on known-feature-long:dev, read in windows:
    the run the CLI's ``known-feature --documents`` and the app's Documents task both start (or resume)."""
    return start_evaluation(model, DATASET, methods, [KNOWN], limit, check_options(seed), store)


def estimate_check_seconds(model: str, methods: list[str], limit: int) -> float:
    """Seconds the check would take here (the one cost model, ``explainers/plan.estimate``): each method's cost on
    the first few documents read in windows, averaged, times ``limit`` documents."""
    classifier = cached_classifier(model)
    documents = [encode_document(classifier, e.text) for e in load_dataset(DATASET)[:ESTIMATE_DOCUMENTS]]
    per_document = [sum(method_estimate(create_from_spec(m), classifier, d)[2] for m in methods) for d in documents]
    return float(np.mean(per_document)) * limit if per_document else 0.0


def findings(table: pd.DataFrame) -> pd.DataFrame:
    """Which methods find the planted word, from a run's table (``run_report.run_table``, or the CLI's summary
    records): documents, mean rank % with its 95 % CI, precision@1, and the random ranking's expectation with the
    95 % band of its mean over the same documents. Lower rank % is better; a method inside the band is no better
    than random."""
    rows: list[dict] = []
    if table.empty:
        return pd.DataFrame(rows)
    for method in [m for m in dict.fromkeys(table["method"]) if m != RANDOM_METHOD]:
        rank = table[(table["method"] == method) & (table["metric"] == RANK)]
        precision = table[(table["method"] == method) & (table["metric"] == PRECISION)]
        if rank.empty:
            continue
        r = rank.iloc[0]
        rows.append({"method": method, "documents": int(r["n"]),
                     "mean rank %": round(100 * float(r["mean"]), 1),
                     "95 % CI": f"[{100 * r['low']:.1f}, {100 * r['high']:.1f}]",
                     "precision@1": round(float(precision.iloc[0]["mean"]), 2) if not precision.empty else None,
                     "random: expected %": round(100 * float(r["random_mean"]), 1),
                     "random: 95 % band": f"[{100 * r['random_low']:.1f}, {100 * r['random_high']:.1f}]",
                     "vs random": r.get("vs_random")})
    return pd.DataFrame(rows)
