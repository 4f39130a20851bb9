"""A dataset run's cell reuses the explanations a page (or an earlier run) left in the cache, and the methods it
computes share their passes, on the real quick model."""
from __future__ import annotations

import numpy as np
import pytest

from corpora import load_dataset
from evaluation.suite.runner import evaluate_example
from explainers import create
from explainers.cache import DEFAULT_CACHE, cached_only, explain_cached

pytestmark = pytest.mark.integration


def test_a_cell_serves_the_pages_explanation_and_shares_the_rest(quick_classifier, tmp_path, monkeypatch):
    # the model by the name a page uses (the prepared models stay where they are), explanations in a temp folder
    monkeypatch.setattr(DEFAULT_CACHE, "directory", tmp_path / "explanations")
    DEFAULT_CACHE.clear()
    example = load_dataset("sst2:dev", limit=1)[0]
    encoding = quick_classifier.encode(example.text)
    page = explain_cached(create("leave_one_out"), quick_classifier, encoding, None)  # what a page left
    DEFAULT_CACHE.clear()  # memory gone (another process): the disk level still has it
    spec = {"model": "default-quick", "dataset": "sst2:dev", "index": 0,
            "methods": ["saliency", "input_x_gradient", "leave_one_out"], "evaluators": ["eraser"],
            "options": {"random_orderings": 0}}
    cell = evaluate_example(spec)
    stored = cell["explanations"]["leave_one_out"]
    assert stored["seconds"] == page.provenance["seconds"]  # served, not recomputed
    assert np.array_equal(stored["scores"], page.word_scores)
    fresh = cached_only(create("input_x_gradient"), quick_classifier, encoding, None)
    assert fresh.provenance["backward_passes"] == 0  # it reused saliency's backward pass in the cell
    assert fresh.provenance["shared_pass"]["computed_by"] == "saliency"
    DEFAULT_CACHE.clear()
