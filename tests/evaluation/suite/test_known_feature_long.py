"""known-feature-long from the app and the CLI (evaluation/suite/known_feature_long.py): the recipe's budget, the
message when the short twin is missing, the build as a one-cell run (a Stop leaves the cache as it was, a finished
build is the manifest's twin), and what the check finds, computed again from the run's stored per-document values."""
from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from known_feature_long_fixtures import TINY_BUDGET, save_short_twin

from corpora import load_dataset
from corpora.records import split_words
from evaluation.faithfulness.known_feature import RECIPE, model_dir
from evaluation.runs.jobs import run_cells
from evaluation.runs.store import ResultStore
from evaluation.suite import known_feature_long as kfl
from evaluation.suite.run_report import run_table
from evaluation.suite.runner import evaluate_example
from evaluation.summary import results_frame
from models import UserFacingError
from models.document_twin import DocumentTwinRecipe, is_prepared, read_manifest, twin_dir


def tree_digest(folder) -> dict:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_the_budget_shrinks_the_recipe_and_bad_settings_say_what_to_write(isolated_cache, monkeypatch):
    assert kfl.document_recipe() == DocumentTwinRecipe(source=model_dir(RECIPE).name)
    monkeypatch.setenv(kfl.BUDGET_ENV, TINY_BUDGET)
    recipe = kfl.document_recipe()
    assert (recipe.train_limit, recipe.eval_limit, recipe.source) == (4, 2, model_dir(RECIPE).name)
    assert kfl.recipe_from(json.loads(json.dumps(kfl.start_build(recipe)[2][0].spec["recipe"]))) == recipe
    monkeypatch.setenv(kfl.BUDGET_ENV, "epochs=2")
    with pytest.raises(UserFacingError, match="unknown setting 'epochs'.*train_limit"):
        kfl.document_recipe()
    monkeypatch.setenv(kfl.BUDGET_ENV, "train_limit=a few")
    with pytest.raises(UserFacingError, match="not a whole number"):
        kfl.document_recipe()


def test_a_missing_short_twin_is_named_with_what_to_do(isolated_cache):
    assert "known-feature --prepare" in kfl.short_twin_missing("default")
    with pytest.raises(UserFacingError, match="not one"):
        kfl.short_twin_missing("some/folder")


def test_a_stopped_build_leaves_the_cache_as_it_was_and_a_finished_one_is_found(keyword_classifier, isolated_cache,
                                                                                monkeypatch):
    monkeypatch.setenv(kfl.BUDGET_ENV, TINY_BUDGET)
    save_short_twin(keyword_classifier)
    assert kfl.short_twin_missing() is None
    models = model_dir(RECIPE).parent
    before = tree_digest(models)
    recipe = kfl.document_recipe()
    store = ResultStore(isolated_cache / "results.sqlite")
    assert store.get_run(kfl.build_run_id(recipe)) is None  # offering the build writes nothing
    store, run_id, cells = kfl.start_build(recipe, 10.0, store)
    assert run_id == kfl.build_run_id(recipe)
    polls = []
    summary = run_cells(store, run_id, cells, kfl.build_cell, should_stop=lambda: polls.append(1) or len(polls) > 1)
    assert summary.status == "cancelled" and summary.done == 0 and len(polls) > 1
    assert tree_digest(models) == before and not is_prepared(recipe)  # no twin, no partial folder, source intact
    summary = run_cells(store, run_id, cells, kfl.build_cell)
    assert summary.status == "finished", store.cells(run_id)
    value = store.cells(run_id)["build"]
    assert value["folder"] == str(twin_dir(recipe)) and value["accuracy"] == read_manifest(recipe)["accuracy"]
    training = store.get_run(run_id)["meta"]["training"]  # what the run's progress bar shows
    assert training["step"] == training["total"] == 1 and training["loss"] is not None  # 4 documents, 4 per step
    assert kfl.start_build(recipe, None, store)[1] == run_id and store.get_run(run_id)["done"] == 1  # found


def test_findings_are_the_per_document_ranks_over_the_documents_words(keyword_classifier, isolated_cache):
    """Another way: each document's stored rank of its planted word divided by its word count (read from the text),
    averaged; precision@1 = the share ranked first; a random ranking's expected rank % is (words + 1) / (2 words)."""
    folder = isolated_cache / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    store, run_id, cells = kfl.start_check(str(folder), ["saliency"], 3, store=ResultStore(isolated_cache / "r.sqlite"))
    assert run_cells(store, run_id, cells, evaluate_example).status == "finished"
    row = kfl.findings(run_table(store, run_id)).set_index("method").loc["saliency"]
    frame = results_frame(store, run_id)
    ranks = frame[(frame["method"] == "saliency") & (frame["metric"] == "known-feature.rank")]
    words = {e.id: len(split_words(e.text)) for e in load_dataset(kfl.DATASET)[:3]}
    assert row["documents"] == 3 == len(ranks)
    share = [r.value / words[r.example_id] for r in ranks.itertuples()]
    assert row["mean rank %"] == round(100 * float(np.mean(share)), 1)
    assert row["precision@1"] == round(float(np.mean([r.value == 1 for r in ranks.itertuples()])), 2)
    expected = 100 * np.mean([(n + 1) / (2 * n) for n in words.values()])
    assert abs(row["random: expected %"] - expected) < 5.0  # 10 seeded orderings per document: near, not equal
