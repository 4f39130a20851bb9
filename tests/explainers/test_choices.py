"""explainers/choices.py: one preparation per page run, read by the cost table and the plan; a choice
changed after it was prepared is prepared again; a refused parameter and a cached entry reach both readers; the
plan made from a preparation equals the plan made without one. The tiny keyword model, the real cache."""
from __future__ import annotations

import pytest

from explainers.cache import DEFAULT_CACHE, cache_key, explain_cached
from explainers.choices import MethodChoice, prepare, prepared_for
from explainers.plan import cost_rows, make_plan, run_now
from explainers.registry import create
from models import TextClassifier
from models.metering import Throughput

TEXT = "the movie was a film with excellent scenes"


@pytest.fixture()
def classifier(keyword_classifier):
    throughput = Throughput(1000.0)
    throughput.record_batch(10, 100, 1.25)  # measured already: the plan times no batch
    DEFAULT_CACHE.clear()
    yield TextClassifier(keyword_classifier.model, keyword_classifier.tokenizer, name="tiny-keyword-choices",
                         fingerprint=keyword_classifier.fingerprint, device="cpu", throughput=throughput)
    DEFAULT_CACHE.clear()


def test_a_preparation_holds_the_explainer_its_key_and_the_cache_answer(classifier):
    encoding = classifier.encode(TEXT)
    stored = explain_cached(create("saliency"), classifier, encoding)  # cached before the page run
    prepared = prepare([MethodChoice("saliency", None, {}), MethodChoice("attention", None, {})], classifier,
                       encoding, None)
    saliency, attention = prepared["saliency"], prepared["attention"]
    assert saliency.key == cache_key(classifier, encoding, create("saliency"), None)  # the key computed the usual way
    assert saliency.hit is not None and saliency.hit.word_scores.tolist() == stored.word_scores.tolist()
    assert saliency.hit.provenance["cache"] == "memory"
    assert attention.hit is None and attention.error is None


def test_a_changed_choice_is_prepared_again_and_a_refused_parameter_reaches_the_rows(classifier):
    encoding = classifier.encode(TEXT)
    prepared = prepare([MethodChoice("lime", None, {"n_samples": 40})], classifier, encoding, None)
    assert prepared_for(MethodChoice("lime", None, {"n_samples": 40}), prepared, classifier, encoding, None) \
        is prepared["lime"]
    other = prepared_for(MethodChoice("lime", None, {"n_samples": 50}), prepared, classifier, encoding, None)
    assert other is not prepared["lime"] and other.explainer.params.n_samples == 50
    refused = [MethodChoice("lime", None, {"n_samples": -3})]
    rows = cost_rows(refused, classifier, encoding, None, prepare(refused, classifier, encoding, None))
    assert rows[0]["method"] == "LIME" and "n_samples" in rows[0]["status"]
    plan = make_plan(refused, classifier, encoding, None, prepared=prepare(refused, classifier, encoding, None))
    assert "n_samples" in plan.results["lime"]


def test_the_plan_from_a_preparation_equals_the_plan_without_one(classifier):
    encoding = classifier.encode(TEXT)
    picked = [MethodChoice(m, None, {}) for m in ("saliency", "input_x_gradient", "leave_one_out", "attention")]
    explain_cached(create("attention"), classifier, encoding)
    prepared = prepare(picked, classifier, encoding, None)
    assert cost_rows(picked, classifier, encoding, None, prepared) == cost_rows(picked, classifier, encoding, None)
    with_prep = make_plan(picked, classifier, encoding, None, budget=1e9, prepared=prepared)
    without = make_plan(picked, classifier, encoding, None, budget=1e9)
    assert [(i.method_id, i.key, i.forward, i.backward, i.shares_with) for i in with_prep.run_now] == \
        [(i.method_id, i.key, i.forward, i.backward, i.shares_with) for i in without.run_now]
    assert with_prep.groups() == without.groups() == [["saliency", "input_x_gradient"]]
    run_now(with_prep, classifier, encoding, None)
    for item in with_prep.run_now:  # stored under the prepared key, the shared pass recorded by explain_member
        hit = DEFAULT_CACHE.get(item.key)
        assert hit is not None and hit.word_scores.tolist() == with_prep.results[item.method_id].word_scores.tolist()
    assert with_prep.results["input_x_gradient"].provenance["shared_pass"]["computed_by"] == "saliency"
