"""The header every dataset run starts with, built once: the model (its spec and the fingerprint of its weights),
the dataset, how many examples, then the study's own settings; the title names the study, the dataset, the example
count and the model. The run id hashes the whole configuration (``store.run_id_for``), so a run started the same way
reopens the stored one (resume) and a changed model or dataset starts a new one."""
from __future__ import annotations

from evaluation.runs.store import ResultStore


def dataset_run_config(model: str, fingerprint: str, dataset: str, examples: list, **settings) -> dict:
    """The configuration a dataset run is keyed by: the common header, then ``settings``."""
    return {"model": model, "model_fingerprint": fingerprint, "dataset": dataset, "limit": len(examples), **settings}


def dataset_run_title(study: str, dataset: str, examples: list, model: str) -> str:
    return f"{study} on {dataset} ({len(examples)} examples), {model}"


def create_dataset_run(store: ResultStore, kind: str, study: str, model: str, fingerprint: str, dataset: str,
                       examples: list, settings: dict, meta: dict | None = None) -> tuple[str, dict]:
    """Create (or find, to resume) the run of ``kind`` with one cell per example: ``(run id, its configuration)``."""
    config = dataset_run_config(model, fingerprint, dataset, examples, **settings)
    title = dataset_run_title(study, dataset, examples, model)
    run_id = store.create_run(kind, config, total=len(examples), title=title, meta=meta)
    return run_id, config
