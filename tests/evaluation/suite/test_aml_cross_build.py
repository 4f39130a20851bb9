"""Building AML's G on another encoder as a run of the job runner (evaluation/suite/aml_cross_build.py): the estimate from
the one cost model, which models are offered an encoder's G, a stopped build (nothing saved), a finished one with its
training progress in the run's meta, found again rather than rebuilt."""
from __future__ import annotations

import math
from dataclasses import asdict

import pytest
from roar_fixtures import save_keyword_model
from tiny_models import tiny_architecture

from evaluation.runs.jobs import run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite.aml_build import BUDGET_ENV, CLASSIFIER_PASSES, SELECTION_FORWARDS, TYPICAL_TOKENS, build_recipe
from evaluation.suite.aml_cross_build import (
    cross_build_cell,
    cross_build_run_id,
    estimate_cross_build_seconds,
    offers_encoder_generator,
    start_cross_build,
)
from explainers.mask_learning.aml_training import AMLRecipe
from models import TextClassifier, cached_classifier, estimate_seconds

TUNE = "aopc-comprehensiveness"


def test_the_estimate_counts_both_models_passes(keyword_classifier, random_classifier):
    recipe = AMLRecipe(train_size=100, validation_size=10, epochs=1.5)
    steps, validation = 100 * 2, 2 * 10  # one input per step, whole epochs; a validation pass per epoch
    generator = estimate_seconds(random_classifier, steps + validation, steps, TYPICAL_TOKENS)
    explained = estimate_seconds(keyword_classifier, steps * (1 + CLASSIFIER_PASSES) + validation * SELECTION_FORWARDS,
                                 steps * CLASSIFIER_PASSES, TYPICAL_TOKENS)
    assert estimate_cross_build_seconds(keyword_classifier, random_classifier, recipe) == pytest.approx(
        generator + explained, rel=1e-12)
    assert math.isfinite(generator + explained) and generator > 0 and explained > 0


def test_a_decoder_or_a_model_without_mask_is_offered_an_encoders_g(keyword_classifier):
    model, tokenizer = tiny_architecture("llama", seed=1)
    decoder = TextClassifier(model, tokenizer, name="tiny-llama", device="cpu", source="tests")
    assert decoder.causal and offers_encoder_generator(decoder)
    assert keyword_classifier.tokenizer.mask_token_id is not None and not offers_encoder_generator(keyword_classifier)


@pytest.mark.integration
def test_a_stopped_build_saves_nothing_and_a_finished_one_is_found_again(quick_classifier, keyword_classifier,
                                                                         quick_cache, tmp_path, monkeypatch):
    monkeypatch.setenv(BUDGET_ENV, "train_size=12,validation_size=6,epochs=1")
    generator = str(save_keyword_model(keyword_classifier, tmp_path / "keyword"))
    source = cached_classifier(generator)
    store = ResultStore(quick_cache.parent / "results.sqlite")
    planned_id = cross_build_run_id("default-quick", quick_classifier, TUNE, generator, source)
    assert store.get_run(planned_id) is None  # a page that only offers the build writes nothing
    store, run_id, cells = start_cross_build("default-quick", quick_classifier, TUNE, generator, source, store)
    assert run_id == planned_id and cells[0].spec["recipe"] == asdict(build_recipe(TUNE))
    polls = []
    summary = run_cells(store, run_id, cells, cross_build_cell, should_stop=lambda: polls.append(1) or len(polls) > 3)
    assert summary.status == "cancelled" and summary.done == 0
    assert not [f for f in quick_cache.iterdir() if f.name.startswith("aml-")]  # nothing half-made
    summary = run_cells(store, run_id, cells, cross_build_cell)
    assert summary.status == "finished", store.cells(run_id)
    folder = store.cells(run_id)["build"]["folder"]
    assert folder.startswith(str(quick_cache)) and "-g-" in folder
    training = store.get_run(run_id)["meta"]["training"]
    assert training["step"] == training["total"] > 0 and training["loss"] is not None
    assert training["validation"] == pytest.approx(store.cells(run_id)["build"]["validation_score"], abs=1e-12)
    again = start_cross_build("default-quick", quick_classifier, TUNE, generator, source, store)[1]
    assert again == run_id and store.get_run(run_id)["done"] == 1  # found, not rebuilt
