"""The Ray executor: a local Ray cluster (2 CPUs) runs a tiny ROAR study in worker processes that import the
project through the runtime environment, and gives exactly the local executor's numbers; a failing cell is
recorded as that cell's error while the others finish."""
from __future__ import annotations

import os
from types import SimpleNamespace

import pytest
from roar_fixtures import save_keyword_model, tiny_study_kwargs, write_keyword_csv

import settings
from corpora.locate import find_dataset_dir
from evaluation.roar.study import build_config, prepare_study, roar_cell, run_study
from evaluation.roar.training import Variant
from evaluation.runs import ray_executor
from evaluation.runs.jobs import Cell, run_cells
from evaluation.runs.store import ResultStore


def test_worker_environment_imports_the_project_locally_and_uploads_it_to_a_cluster(monkeypatch):
    monkeypatch.setenv("EXWB_CACHE_DIR", "/somewhere/cache")
    monkeypatch.delenv("EXWB_RAY_ADDRESS", raising=False)
    assert ray_executor.resolve_address(None) is None and ray_executor.resolve_address("local") is None
    assert ray_executor.resolve_address("ray://head:10001") == "ray://head:10001"
    local = ray_executor.runtime_env(None, cpus_per_task=2)
    assert local["env_vars"]["PYTHONPATH"].split(os.pathsep)[0] == str(settings.ROOT)
    assert local["env_vars"]["EXWB_CACHE_DIR"] == "/somewhere/cache" and "working_dir" not in local
    remote = ray_executor.runtime_env("auto", extra={"env_vars": {"EXWB_DEVICE": "cuda"}})
    assert remote["working_dir"] == str(settings.ROOT) and ".git" in remote["excludes"]
    assert "PYTHONPATH" not in remote["env_vars"] and remote["env_vars"]["EXWB_DEVICE"] == "cuda"
    assert "streamlit" not in " ".join(remote["env_vars"].values())


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, keyword_classifier):
    root = tmp_path_factory.mktemp("roar-ray")
    folder = save_keyword_model(keyword_classifier, root / "model")
    data = root / "data"
    data.mkdir()
    write_keyword_csv(data / "train.csv", 60, seed=1)
    write_keyword_csv(data / "test.csv", 30, seed=2)
    return SimpleNamespace(root=root, folder=folder, data=data)


@pytest.mark.slow
@pytest.mark.ray
def test_same_seeds_give_the_same_numbers_on_ray_and_locally(tiny, monkeypatch):
    ray = pytest.importorskip("ray")
    from explainers.cache import DEFAULT_CACHE

    kwargs = tiny_study_kwargs(tiny.folder, tiny.data, measures=["loo"], ratios=[20, 50], seeds=[0], mode="both",
                               variant=Variant(trainable="head", train_size=60, test_size=30, epochs=1))
    # the local run, in its own cache (no artifact can leak into the Ray run)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tiny.root / "local-cache"))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tiny.root / "local-cache" / "explanations")
    config = build_config(**kwargs)
    local_store, local = run_study(config, ResultStore(tiny.root / "local.sqlite"))
    assert local.status == "finished"
    # the Ray run: the workers get their own cache folder through the runtime environment
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tiny.root / "ray-cache"))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        store, run_id, cells = prepare_study(config, ResultStore(tiny.root / "ray.sqlite"))
        bad = Cell("broken|0|0|0", {**cells[0].spec, "config": {**cells[0].spec["config"],
                                                                 "model_fingerprint": "0000000000000000"}})
        seen = []
        summary = run_cells(store, run_id, cells + [bad], roar_cell, executor="ray",
                            progress=lambda done, total, left: seen.append(done))
    finally:
        ray_executor.shutdown()
    assert summary.errors.keys() == {"broken|0|0|0"} and "not the one the study was made with" in summary.errors[
        "broken|0|0|0"]
    assert summary.status == "finished with errors" and seen[-1] == len(cells) + 1
    ray_cells, local_cells = store.cells(run_id), local_store.cells(local.run_id)
    assert set(local_cells) == {c.key for c in cells}
    for key, expected in local_cells.items():
        assert ray_cells[key]["accuracy"] == expected["accuracy"], key
        assert ray_cells[key]["macro_f1"] == expected["macro_f1"], key
        assert ray_cells[key]["masked_share"] == expected["masked_share"], key
        assert ray_cells[key]["worker"]["pid"] != os.getpid()  # computed in a Ray worker process
    assert (tiny.root / "ray-cache" / "roar-artifacts").is_dir()  # the workers used the cache they were given


@pytest.mark.slow
@pytest.mark.ray
def test_a_worker_running_from_the_uploaded_project_finds_the_drivers_data(monkeypatch):
    """What joining a cluster does (the project uploaded as ``working_dir``), on a local Ray: the default data folder
    (shared/data beside this checkout) is not beside the uploaded copy, so the driver's travels as EXWB_DATA_DIR."""
    ray = pytest.importorskip("ray")
    monkeypatch.delenv("EXWB_DATA_DIR", raising=False)
    expected = settings.data_dir()
    if expected is None:
        pytest.skip("no data folder beside this checkout")
    env = ray_executor.runtime_env("a cluster", cpus_per_task=1)  # what run_on_ray builds for a cluster address
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, runtime_env=env)
    try:
        task = ray.remote(num_cpus=1)(find_dataset_dir)  # imported, in the worker, from the uploaded copy
        found = ray.get(task.remote("sst2-sentences"))
        assert ray.get_runtime_context().runtime_env["working_dir"].startswith("gcs://")  # uploaded, not a path
    finally:
        ray_executor.shutdown()
    assert str(found) == str(expected / "sst2-sentences")
