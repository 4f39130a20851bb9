"""What the papers' findings share: the project's dataset studies run (or reopened) as inner stored runs inside a
reproduce cell (dataset evaluations, ROAR studies), and the masked LM's availability (paper 000's IM and
DeletionBERT need it)."""
from __future__ import annotations

from dataclasses import fields

import pandas as pd

from evaluation import summary
from evaluation.roar import scores as roar_scores
from evaluation.roar.config import StudyConfig
from evaluation.roar.cost import FORWARD_FACTOR
from evaluation.roar.presets import PRESETS
from evaluation.roar.study import build_config, prepare_study, roar_cell
from evaluation.roar.training import Variant
from evaluation.runs.store import ResultStore
from evaluation.suite import runner
from evaluation.suite.report_card import run_study
from models import UserFacingError
from models.mlm import load_filler

VARIANT_FIELDS = {f.name for f in fields(Variant)}
STUDY_FIELDS = {"mode", "operator", "target", "rank_by", "count_rule", "segments", "anchors"}
NO_MLM = ("the offline masked LM is not prepared: run `python cli.py prepare-mlm`, then resume this run (it "
          "recomputes only the cells that need it)")


def mlm_missing() -> str | None:
    """None when the masked LM loads, else the reason a finding that needs it is skipped."""
    try:
        load_filler()
    except UserFacingError:
        return NO_MLM
    return None


def evaluation_frame(spec: dict, model: str, dataset: str, methods: list[str], evaluators: list[str],
                     options: dict | None = None, limit: int | None = None) -> pd.DataFrame:
    """The per-example results frame of the project's dataset runner (``summary.results_frame``), run or reopened
    in the reproduce run's store; no random orderings unless asked (the findings compare methods)."""
    store = ResultStore(spec["store"])
    budget = spec["budget"]
    settings = {"random_orderings": 0, "seed": spec["seed"], **(options or {})}
    run_id, _ = run_study(lambda s: runner.start_evaluation(model, dataset, methods, evaluators,
                                                            limit or budget.examples, settings, s),
                          runner.evaluate_example, store, runner.batched_gradient_passes)
    return summary.results_frame(store, run_id)


def mean(frame: pd.DataFrame, method: str, metric: str) -> float:
    """A method's mean of a metric over the examples (ill-conditioned values left out, as the runner's summary)."""
    part = frame[(frame["method"] == method) & (frame["metric"] == metric) & ~frame["ill_conditioned"]]
    if part.empty:
        raise UserFacingError(f"no value of {metric} for {method} (see the inner run's errors)")
    return float(part["value"].mean())


def roar_config(seed: int, model: str, preset: str, sizes: dict, check_model: bool = True,
                **overrides) -> StudyConfig:
    """The ROAR study of ``model`` with a paper's preset (``roar/presets.PRESETS``), retrained with ``seed`` only
    (so the interval is over training seeds), at the budget's ``sizes`` (ratios, the retraining variant's fields,
    the measure settings)."""
    chosen = {**PRESETS[preset], **overrides}
    variant = Variant(**{**{k: v for k, v in chosen.items() if k in VARIANT_FIELDS}, **sizes.get("variant", {})})
    study = {k: v for k, v in chosen.items() if k in STUDY_FIELDS}
    return build_config(model=model, dataset="sst2", measures=list(chosen["measures"]),
                        ratios=sizes.get("ratios", chosen["ratios"]), seeds=(seed,),
                        settings=sizes.get("settings", chosen.get("settings", "cheap")), variant=variant,
                        check_model=check_model, **study)


def roar_frame(spec: dict, model: str, preset: str, sizes: dict, **overrides) -> pd.DataFrame:
    """The cells frame (``roar/scores.cells_frame``) of ``roar_config``'s study for this cell's seed, run or
    reopened in the reproduce store."""
    config = roar_config(spec["seed"], model, preset, sizes, **overrides)
    store = ResultStore(spec["store"])
    run_id, _ = run_study(lambda s: prepare_study(config, s), roar_cell, store)
    return roar_scores.cells_frame(store.cells(run_id))


SST2_SIZES = {"train": 6920, "test": 872}  # corpora's sst2 train and dev sentences (a size of 0: every one)


def roar_sentences(preset: str, sizes: dict) -> tuple[int, int]:
    """(train, test) sentences of ``roar_config``'s study: what the importance is computed on (the estimate)."""
    chosen = {**PRESETS[preset], **sizes.get("variant", {})}
    return chosen["train_size"] or SST2_SIZES["train"], chosen["test_size"] or SST2_SIZES["test"]


def roar_retrain_passes(preset: str, sizes: dict) -> float:
    """Forward-pass equivalents of one retrain (the estimate): the head variant runs the frozen encoder once per
    sentence (roar/training.py); the others train every epoch (roar/cost.py's factors) and test once."""
    chosen = {**PRESETS[preset], **sizes.get("variant", {})}
    train, test = roar_sentences(preset, sizes)
    if chosen["trainable"] == "head":
        return train + test
    return train * float(chosen.get("epochs", 3.0)) * FORWARD_FACTOR[chosen["trainable"]] + test
