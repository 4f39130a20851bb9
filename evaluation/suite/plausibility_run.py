"""A plausibility run: an ordinary dataset evaluation of the shared runner with the plausibility evaluators,
refused up front for a dataset without human rationales; its tables are ``evaluation/plausibility/dataset.py``'s."""
from __future__ import annotations

from corpora import load_dataset
from evaluation.plausibility.dataset import EVALUATORS
from evaluation.plausibility.metrics import config_from_options
from evaluation.runs.jobs import Cell, Progress, RunSummary, run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite.runner import evaluate_example, start_evaluation


def start_plausibility(model: str, dataset: str, methods: list[str], limit: int | None = None,
                       options: dict | None = None, store: ResultStore | None = None
                       ) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) a plausibility run and its cells without running them."""
    config_from_options(options)  # a bad setting fails here, before any work
    if not any(e.rationale is not None for e in load_dataset(dataset, limit=limit)):
        raise ValueError(f"{dataset} has no human rationales; pick a dataset with rationales (eraser-movies, "
                         f"esnli-highlights, sst-rationales, or a file with a 'rationale' column).")
    return start_evaluation(model, dataset, list(methods), EVALUATORS, limit, options, store)


def run_plausibility(model: str, dataset: str, methods: list[str], limit: int | None = None,
                     options: dict | None = None, store: ResultStore | None = None, executor: str = "local",
                     progress: Progress | None = None, should_stop=None) -> tuple[ResultStore, str, RunSummary]:
    store, run_id, cells = start_plausibility(model, dataset, methods, limit, options, store)
    summary = run_cells(store, run_id, cells, evaluate_example, executor=executor, progress=progress,
                        should_stop=should_stop)
    return store, run_id, summary


# ----- tables ---------------------------------------------------------------------------------------------------
