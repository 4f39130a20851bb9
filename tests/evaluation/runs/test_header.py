"""The one dataset-run header: the configuration every start_* function keys its run by, and the title."""
from __future__ import annotations

from evaluation.runs.header import create_dataset_run, dataset_run_config
from evaluation.runs.store import ResultStore, run_id_for


def test_the_header_is_the_configuration_runs_were_keyed_by_before_it_was_shared(tmp_path):
    examples = ["a", "b", "c"]
    settings = {"methods": ["saliency"], "evaluators": ["eraser"], "options": {"seed": 0}}
    config = dataset_run_config("default-quick", "abc123", "sst2:dev", examples, **settings)
    # written out as start_evaluation built it by hand: stored runs keep their ids, so they still resume
    assert config == {"model": "default-quick", "model_fingerprint": "abc123", "dataset": "sst2:dev", "limit": 3,
                      "methods": ["saliency"], "evaluators": ["eraser"], "options": {"seed": 0}}
    store = ResultStore(tmp_path / "results.sqlite")
    run_id, stored = create_dataset_run(store, "evaluation", "eraser", "default-quick", "abc123", "sst2:dev", examples,
                                        settings)
    assert stored == config and run_id == run_id_for("evaluation", config)
    run = store.get_run(run_id)
    assert run["title"] == "eraser on sst2:dev (3 examples), default-quick" and run["total"] == 3
    # the same start reopens the same run; another model's weights start another
    assert create_dataset_run(store, "evaluation", "eraser", "default-quick", "abc123", "sst2:dev", examples,
                              settings)[0] == run_id
    assert create_dataset_run(store, "evaluation", "eraser", "default-quick", "fff999", "sst2:dev", examples,
                              settings)[0] != run_id
