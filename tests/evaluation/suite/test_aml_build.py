"""Building AML's attribution model as a run of the job runner (evaluation/suite/aml_build.py): the recipe and its test
budget, the estimate from the one cost model, a finished build, a stopped one (nothing saved), bad settings."""
from __future__ import annotations

import math
from dataclasses import asdict

import pytest

from evaluation.runs.jobs import run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite.aml_build import (
    BUDGET_ENV,
    CLASSIFIER_PASSES,
    SELECTION_FORWARDS,
    TYPICAL_TOKENS,
    build_cell,
    build_recipe,
    build_run_id,
    estimate_build_seconds,
    progress_writer,
    start_build,
    training_data,
)
from explainers.mask_learning.aml_training import AMLRecipe
from models import UserFacingError, estimate_seconds


def test_the_app_builds_with_the_papers_recipe_unless_a_budget_is_set(monkeypatch):
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    assert build_recipe("sufficiency") == AMLRecipe(tune="sufficiency")
    assert build_recipe("comprehensiveness-eraser").tune == "aopc-comprehensiveness"  # an id names it too
    monkeypatch.setenv(BUDGET_ENV, "train_size=20, validation_size=8,epochs=1.5")
    recipe = build_recipe("sufficiency")
    assert (recipe.train_size, recipe.validation_size, recipe.epochs) == (20, 8, 1.5)
    assert isinstance(recipe.train_size, int) and recipe.lr == AMLRecipe().lr


@pytest.mark.parametrize("budget, message", [("size=3", "unknown setting 'size'"), ("epochs=lots", "not a number"),
                                             ("tune=sufficiency", "unknown setting 'tune'")])
def test_a_bad_budget_gets_a_message(monkeypatch, budget, message):
    monkeypatch.setenv(BUDGET_ENV, budget)
    with pytest.raises(UserFacingError, match=message):
        build_recipe("sufficiency")


def test_the_estimate_counts_training_and_validation_passes(keyword_classifier):
    recipe = AMLRecipe(train_size=100, validation_size=10, epochs=2.0, eval_every=0.5)
    steps = 100 * 2.0  # inputs seen
    checks = 4 + 1  # every 0.5 epoch over 2 epochs, and the last step
    forward = steps * (1 + CLASSIFIER_PASSES) + checks * 10 * SELECTION_FORWARDS
    backward = steps * (1 + CLASSIFIER_PASSES)
    expected = estimate_seconds(keyword_classifier, forward, backward, TYPICAL_TOKENS)
    assert estimate_build_seconds(keyword_classifier, recipe) == pytest.approx(expected, rel=1e-12)
    bigger = estimate_build_seconds(keyword_classifier, AMLRecipe(train_size=200, validation_size=10, epochs=2.0,
                                                                  eval_every=0.5))
    assert bigger > expected and math.isfinite(bigger)


def test_a_model_that_does_not_name_its_training_data_gets_a_message(keyword_classifier):
    with pytest.raises(UserFacingError, match="prepare-aml"):
        training_data(keyword_classifier)


@pytest.mark.integration
def test_a_stopped_build_saves_nothing_and_a_finished_one_is_found_again(quick_classifier, quick_cache, monkeypatch):
    monkeypatch.setenv(BUDGET_ENV, "train_size=40,validation_size=8,epochs=1")  # two steps
    store = ResultStore(quick_cache.parent / "results.sqlite")
    planned_id = build_run_id("default-quick", quick_classifier, "aopc-comprehensiveness")
    assert store.get_run(planned_id) is None  # a page that only offers the build writes nothing
    store, run_id, cells = start_build("default-quick", quick_classifier, "aopc-comprehensiveness", store)
    assert run_id == planned_id
    assert [c.spec["recipe"] for c in cells] == [asdict(build_recipe("aopc-comprehensiveness"))]
    polls = []
    summary = run_cells(store, run_id, cells, build_cell, should_stop=lambda: polls.append(1) or len(polls) > 1)
    assert summary.status == "cancelled" and summary.done == 0
    assert not [f for f in quick_cache.iterdir() if f.name.startswith("aml-")]  # nothing half-made
    summary = run_cells(store, run_id, cells, build_cell)
    assert summary.status == "finished", store.cells(run_id)
    folder = store.cells(run_id)["build"]["folder"]
    assert folder.startswith(str(quick_cache)) and "aml-" in folder
    training = store.get_run(run_id)["meta"]["training"]
    assert training["step"] == training["total"] == 2 and training["loss"] is not None
    again = start_build("default-quick", quick_classifier, "aopc-comprehensiveness", store)[1]
    assert again == run_id and store.get_run(run_id)["done"] == 1  # found, not rebuilt


def test_progress_of_a_run_deleted_meanwhile_gets_a_message(tmp_path):
    """The build's progress is written into its run; a run deleted before its cell starts is a message (it was a
    TypeError on the missing run's None)."""
    store = ResultStore(tmp_path / "results.sqlite")
    run_id = store.create_run("aml-build", {"model": "m"}, total=1, meta={"estimated_cell_seconds": 1.0})
    progress_writer(store, run_id)(4, 4, {"loss": 0.5})  # the last step is always written
    assert store.get_run(run_id)["meta"]["training"] == {"step": 4, "total": 4, "loss": 0.5, "validation": None}
    store.delete_run(run_id)
    with pytest.raises(UserFacingError, match="no longer in the result store"):
        progress_writer(store, run_id)
