"""A ROAR / Recursive ROAR study as job cells: (measure, ratio, seed, step) -> retrained test accuracy / F1.

Method (shared/notes/seeds-000-001.md):
- ROAR (paper 001 section 3.1; paper 000 section 3.3): importance from the explained model, the top-r words of
  every train and test example removed, a fresh model retrained, its test accuracy and macro-F1 recorded.
  Cells have ``step = 0``.
- Recursive ROAR (paper 001 section 3.2, Fig. 2): step i recomputes importance with the model retrained at step
  i-1 on the data masked at step i-1, keeps removed words removed and removes up to ratio r_i in total. Cells
  have ``step = i`` (1-based; step 1 equals ROAR at r_1 and shares its artifacts).
- The random baseline is model independent, so ROAR and Recursive ROAR share it (paper 001 code); the 0 % and
  100 % models are shared by every measure ("anchor" cells). Seeds change the retrained model only.

``roar_cell(spec)`` is the work of one cell and depends only on its spec (the whole study configuration is
in it), so the local and the Ray executor give the same numbers. Artifacts (masks, weights) are cached by
content (``roar_artifacts``); importance goes through the explanation cache.

The study's parts: its configuration (``config.py``), the paper presets (``presets.py``), the examples
(``data.py``), one step's masks and retrained model (``steps.py``) and the cost estimate (``cost.py``).
"""
from __future__ import annotations

import os
import platform
import time
from dataclasses import replace

from corpora import DATASETS, parse_dataset_id
from corpora.records import DataError
from evaluation.roar.config import FULL_RATIOS, StudyConfig
from evaluation.roar.cost import retrain_count
from evaluation.roar.data import SPLITS, StudyData, mlm_filler, study_data
from evaluation.roar.measures import SETTINGS, Measure, resolve_measure
from evaluation.roar.presets import default_seeds
from evaluation.roar.steps import anchor_masks, recursive_masks, static_masks, trained
from evaluation.roar.training import Variant
from evaluation.runs.jobs import JOBS, Cell, Progress, RunSummary, run_cells
from evaluation.runs.store import ResultStore
from explainers import split_spec
from models import cached_classifier, runtime
from models.errors import UserFacingError

KIND = "roar"
ANCHOR = "anchor"


def build_config(model: str = "default", dataset: str | None = "sst2", train_data: str | None = None,
                 test_data: str | None = None, measures=("ig", "lime", "loo", "attention"), ratios=None, seeds=None,
                 mode: str = "roar", operator: str = "mask", target: str = "predicted", rank_by: str = "signed",
                 count_rule: str = "floor", segments: str = "first", anchors: bool = True, settings: str = "cheap",
                 measure_params: dict | None = None, variant: Variant | None = None, data_seed: int = 0,
                 filler: str = "mlm", check_model: bool = True) -> StudyConfig:
    """A validated configuration; the model is loaded to record its fingerprint (so a changed model is a new
    study) and the datasets are checked to exist."""
    if train_data is None or test_data is None:
        name, _ = parse_dataset_id(dataset or "sst2")

        splits = DATASETS[name].splits if name in DATASETS else ()
        train_data = train_data or (f"{name}:train" if "train" in splits else None)
        test_data = test_data or (f"{name}:dev" if "dev" in splits else f"{name}:validation" if "validation" in splits
                                  else f"{name}:test" if "test" in splits else None)
        if train_data is None or test_data is None:
            raise DataError(f"Dataset '{dataset}' has no train and dev/test split; give --train-data and --test-data.")
    if settings not in SETTINGS:
        raise UserFacingError(f"Unknown measure settings '{settings}'; use {', '.join(SETTINGS)}.")
    resolved = [resolve_measure(m, settings, (measure_params or {}).get(split_spec(m)[0]))
                for m in measures if m.strip()]
    seen, unique = set(), []
    for measure in resolved:
        if measure.id not in seen and not measure.is_random:
            seen.add(measure.id)
            unique.append(measure)
    ratios = tuple(sorted({float(r) for r in (ratios if ratios is not None else FULL_RATIOS)} - {0.0, 100.0}))
    config = StudyConfig(model=model, train_data=train_data, test_data=test_data,
                         measures=tuple(m.to_dict() for m in unique), ratios=ratios,
                         seeds=tuple(seeds) if seeds is not None else default_seeds(), mode=mode, operator=operator,
                         target=target, rank_by=rank_by, count_rule=count_rule, segments=segments, anchors=anchors,
                         data_seed=data_seed, filler=filler, variant=variant or Variant())
    if check_model:
        config = replace(config, model_fingerprint=cached_classifier(model).fingerprint)
        study_data(config)  # loads and checks the data now (clear errors before any job starts)
        mlm_filler(config)  # the mlm operator: is the masked LM there?
        for measure in unique:  # IM, LIME-BERT: is their masked LM there? (a clear error now, not in every cell)
            explainer = measure.explainer()
            if explainer.needs_mlm:
                explainer.filler()
    return config



def _masked_share(data: StudyData, masks: dict) -> dict:
    out = {}
    for split in SPLITS:
        removed = sum(int(m.sum()) for m in masks[split])
        eligible = sum(int(e.sum()) for e in data.eligible[split])
        out[split] = removed / eligible if eligible else 0.0
    return out


def _preview(data: StudyData, masks: dict, n: int = 3) -> list[dict]:
    return [{"words": list(data.encodings["test"][i].words), "removed": [bool(x) for x in masks["test"][i]]}
            for i in range(min(n, len(data.encodings["test"])))]


# ----- cells -----------------------------------------------------------------------------------------------
def cell_key(measure: str, ratio: float, seed: int, step: int) -> str:
    return f"{measure}|{ratio:g}|{seed}|{step}"


def study_cells(config: StudyConfig) -> list[Cell]:
    """Every cell, in an order that computes each measure's importance once and each recursive chain in order."""
    base = config.to_dict()
    cells = []

    def add(kind: str, measure: Measure | None, ratio: float, seed: int, step: int):
        name = ANCHOR if measure is None else measure.id
        spec = {"config": base, "kind": kind, "measure": None if measure is None else measure.to_dict(),
                "ratio": float(ratio), "seed": int(seed), "step": int(step)}
        cells.append(Cell(cell_key(name, ratio, seed, step), spec))

    if config.anchors:
        for seed in config.seeds:
            add(ANCHOR, None, 0.0, seed, 0)
            add(ANCHOR, None, 100.0, seed, 0)
    for measure in config.measure_list():
        for seed in config.seeds:
            if config.mode in ("roar", "both") or measure.is_random:
                for ratio in config.ratios:
                    add("roar", measure, ratio, seed, 0)
            if config.mode in ("recursive", "both") and not measure.is_random:
                for step, ratio in enumerate(config.ratios, start=1):
                    add("recursive", measure, ratio, seed, step)
    return cells


def roar_cell(spec: dict) -> dict:
    """The work of one cell (runs in this process or on a Ray worker; depends only on ``spec``)."""

    config = StudyConfig.from_dict(spec["config"])
    data = study_data(config)
    seed, ratio, step, kind = int(spec["seed"]), float(spec["ratio"]), int(spec["step"]), spec["kind"]
    measure = Measure.from_dict(spec["measure"]) if spec.get("measure") else None
    started = time.perf_counter()
    if kind == ANCHOR:
        masks, info = anchor_masks(data, ratio), {"importance_seconds": 0.0, "reused": False}
    elif measure is None:
        raise UserFacingError(f"The ROAR cell '{kind}' at {ratio:g} % names no measure; only anchor cells have none.")
    elif kind == "recursive":
        masks, info = recursive_masks(config, data, measure, step, seed)
    else:
        masks, info = static_masks(config, data, measure, ratio, seed)
    masking_seconds = time.perf_counter() - started
    _, metrics, _ = trained(config, data, masks, seed)
    return {
        "kind": kind, "measure": ANCHOR if measure is None else measure.id,
        "method": None if measure is None else measure.method,
        "measure_label": ("no measure (0 % / 100 % anchor)" if measure is None else measure.label()),
        "ratio": ratio, "seed": seed, "step": step,
        "accuracy": metrics["accuracy"], "macro_f1": metrics["macro_f1"],
        "masked_share": _masked_share(data, masks), "n_train": metrics["n_train"], "n_test": metrics["n_test"],
        "predicted_share": metrics.get("predicted_share"),
        "variant": config.variant.label(), "trainable": config.variant.trainable, "operator": config.operator,
        "target": config.target, "importance_model": info.get("importance_model", "none"),
        "importance_seconds": info.get("importance_seconds", 0.0), "masking_seconds": round(masking_seconds, 3),
        "train_seconds": metrics.get("train_seconds"), "eval_seconds": metrics.get("eval_seconds"),
        "masks_reused": bool(info.get("reused")), "retrain_reused": bool(metrics.get("reused")),
        "train_record": metrics.get("train_record"), "device": str(runtime.choose_device()),
        "worker": {"host": platform.node(), "pid": os.getpid()},
        "examples": _preview(data, masks),
    }


# ----- runs -----------------------------------------------------------------------------------------------------
def prepare_study(config: StudyConfig, store: ResultStore | None = None,
                  estimated_seconds: float | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the study's run and its cells, without running anything; ``estimated_seconds``
    (from ``estimate``) gives the time left before the first cell finishes."""
    store = store or ResultStore()
    cells = study_cells(config)
    meta: dict = {"provenance": config.provenance(), "retrains": retrain_count(config)}
    if estimated_seconds is not None and cells:
        meta["estimated_cell_seconds"] = estimated_seconds / len(cells)
    run_id = store.create_run(KIND, config.to_dict(), total=len(cells), title=config.title(), meta=meta)
    return store, run_id, cells


def cells_of_run(store: ResultStore, run_id: str) -> tuple[StudyConfig, list[Cell]]:
    """The configuration and cells of a stored study (to resume it after a restart)."""
    run = store.get_run(run_id)
    if run is None or run["kind"] != KIND:
        raise UserFacingError(f"No ROAR study '{run_id}' in {store.path}.")
    config = StudyConfig.from_dict(run["config"])
    return config, study_cells(config)


def run_study(config: StudyConfig, store: ResultStore | None = None, executor: str = "local",
              progress: Progress | None = None, should_stop=None, ray_address: str | None = None,
              ray_resources: dict | None = None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = prepare_study(config, store)
    summary = run_cells(store, run_id, cells, roar_cell, executor=executor, progress=progress, should_stop=should_stop,
                        ray_address=ray_address, ray_resources=ray_resources)
    return store, summary


def start_study(config: StudyConfig, store: ResultStore, executor: str = "local", ray_address: str | None = None,
                ray_resources: dict | None = None, estimated_seconds: float | None = None) -> str:
    """Start (or resume) a study in a background thread; returns the run id at once."""
    store, run_id, cells = prepare_study(config, store, estimated_seconds)
    JOBS.start(store, run_id, cells, roar_cell, executor=executor, ray_address=ray_address,
               ray_resources=ray_resources)
    return run_id


__all__ = ["ANCHOR", "KIND", "build_config", "cells_of_run", "prepare_study", "roar_cell", "run_study", "start_study",
           "study_cells"]
