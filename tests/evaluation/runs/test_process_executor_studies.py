"""The processes executor behind the other dataset commands: a sanity study and a ROAR study give the local
executor's numbers when their cells run in worker processes, on tiny models saved to folders."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from roar_fixtures import save_keyword_model, tiny_study_kwargs, write_keyword_csv

import cli
from evaluation.roar.study import build_config, run_study
from evaluation.roar.training import Variant
from evaluation.runs.store import ResultStore
from evaluation.sanity import dataset as sanity_dataset


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, random_classifier, keyword_classifier):
    root = tmp_path_factory.mktemp("process-studies")
    data = root / "data"
    data.mkdir()
    write_keyword_csv(data / "train.csv", 60, seed=1)
    return SimpleNamespace(root=root, data=data, test=write_keyword_csv(data / "test.csv", 30, seed=2),
                           random=save_keyword_model(random_classifier, root / "random"),  # no exactly tied words
                           keyword=save_keyword_model(keyword_classifier, root / "keyword"))


@pytest.mark.slow  # worker processes start, each importing torch
def test_a_sanity_study_gives_the_local_numbers(tiny, tmp_path):
    arguments = dict(model=str(tiny.random), dataset=tiny.test, methods=["saliency", "leave_one_out"], limit=4, seed=2)
    local_store, local = sanity_dataset.run_sanity_study(store=ResultStore(tmp_path / "l.sqlite"), **arguments)
    store, summary = sanity_dataset.run_sanity_study(store=ResultStore(tmp_path / "p.sqlite"), executor="processes",
                                                     **arguments)
    assert local.status == summary.status == "finished" and summary.done == 4
    key = ["example_id", "stage", "method", "metric"]
    ours = sanity_dataset.results_frame(store, summary.run_id).sort_values(key).reset_index(drop=True)
    theirs = sanity_dataset.results_frame(local_store, local.run_id).sort_values(key).reset_index(drop=True)
    assert len(ours) == len(theirs) > 0 and ours[key].equals(theirs[key])
    assert np.allclose(ours["value"], theirs["value"], atol=1e-5, equal_nan=True)


@pytest.mark.slow  # worker processes start, each importing torch
def test_a_roar_study_gives_the_local_numbers(tiny, tmp_path, monkeypatch):
    """Retrains are seeded by their spec, so worker processes train the same models (each its own cache here)."""
    from explainers.cache import DEFAULT_CACHE

    kwargs = tiny_study_kwargs(tiny.keyword, tiny.data, measures=["loo"], ratios=[20, 50], seeds=[0], mode="both",
                               variant=Variant(trainable="head", train_size=60, test_size=30, epochs=1))
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "local-cache"))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "local-cache" / "explanations")
    config = build_config(**kwargs)
    local_store, local = run_study(config, ResultStore(tmp_path / "l.sqlite"))
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "workers-cache"))
    store, summary = run_study(config, ResultStore(tmp_path / "p.sqlite"), executor="processes")
    assert local.status == summary.status == "finished"
    assert (tmp_path / "workers-cache" / "roar-artifacts").is_dir()  # trained in the workers, not served locally
    ours, theirs = store.cells(summary.run_id), local_store.cells(local.run_id)
    assert set(ours) == set(theirs) and ours
    for key, expected in theirs.items():
        for measure in ("accuracy", "macro_f1", "masked_share"):
            assert ours[key][measure] == pytest.approx(expected[measure], abs=1e-6), (key, measure)


def test_every_dataset_command_offers_the_processes_executor(capsys):
    for command in ("evaluate", "sanity", "roar", "adversarial", "compare-models"):
        with pytest.raises(SystemExit):
            cli.main([command, "--help"])
        assert "{local,processes,ray}" in capsys.readouterr().out, command
