"""explainers/plan.py and shared passes: the plan groups the methods run now by the pass they share
(followers cost nothing), the page run computes each pass once, and an ensemble's estimate leaves out its
members that are cached or chosen on the page (no pass counted twice)."""
from __future__ import annotations

import pytest

from explainers import Explanation, create
from explainers.cache import DEFAULT_CACHE, explain_cached
from explainers.choices import MethodChoice
from explainers.plan import Pending, cost_rows, make_plan, run_now
from models import TextClassifier
from models.metering import Throughput

TEXT = "the movie was a film that this story had excellent scenes with actors and music"
LOO_SHARED = {"occlusion": {"window": 1, "operator": "delete"}}


@pytest.fixture()
def classifier(keyword_classifier):
    throughput = Throughput(1000.0)  # the nominal rate the auto-run decision uses (models/metering.py rule (g))
    throughput.record_batch(10, 100, 1.25)  # a measured speed: the plan does not time a batch itself
    DEFAULT_CACHE.clear()
    yield TextClassifier(keyword_classifier.model, keyword_classifier.tokenizer, name="tiny-keyword-sharing",
                         fingerprint=keyword_classifier.fingerprint, device="cpu", throughput=throughput)
    DEFAULT_CACHE.clear()


def choices(*method_ids, **overrides) -> list[MethodChoice]:
    return [MethodChoice(m, None, overrides.get(m, {})) for m in method_ids]


def test_the_plan_groups_methods_by_shared_pass_and_the_run_computes_each_pass_once(classifier):
    encoding = classifier.encode(TEXT)
    classifier.logits_of(encoding)
    picked = choices("saliency", "leave_one_out", "input_x_gradient", "attention", "occlusion", **LOO_SHARED)
    plan = make_plan(picked, classifier, encoding, None, budget=1e9)
    assert plan.groups() == [["saliency", "input_x_gradient"], ["leave_one_out", "occlusion"]]
    planned = {item.method_id: item for item in plan.run_now}
    assert planned["input_x_gradient"].shares_with == "saliency"
    assert (planned["input_x_gradient"].forward, planned["input_x_gradient"].backward) == (0, 0)
    assert planned["input_x_gradient"].seconds == 0.0 and planned["saliency"].backward == 1
    assert planned["occlusion"].shares_with == "leave_one_out" and planned["occlusion"].forward == 0
    assert planned["leave_one_out"].forward == encoding.n_words

    rows = cost_rows(picked, classifier, encoding, None)
    assert [r["shared pass"] for r in rows] == ["", "", "with Saliency (gradient)", "", "with Leave-one-out"]
    assert rows[2]["forward passes"] == 0 and rows[4]["forward passes"] == 0

    run_now(plan, classifier, encoding, None)
    results = plan.results
    assert results["saliency"].provenance["backward_passes"] == 1
    assert results["input_x_gradient"].provenance["backward_passes"] == 0  # reused saliency's pass
    assert results["occlusion"].provenance["forward_passes"] == 0
    assert results["input_x_gradient"].provenance["shared_pass"]["shared_with"] == ["saliency"]
    assert "shared_pass" not in results["attention"].provenance
    # each member is in the cache under its own key: a page that shows only one of them finds it
    alone = explain_cached(create("input_x_gradient"), classifier, encoding, None)
    assert alone.provenance["cache"] == "memory"


def test_a_method_that_waits_for_a_click_claims_no_pass(classifier):
    """A follower only rides on a pass that really runs now: behind a pending leader it is priced alone."""
    encoding = classifier.encode(TEXT)
    plan = make_plan(choices("saliency", "input_x_gradient"), classifier, encoding, None, budget=0.0)
    assert plan.run_now == [] and plan.groups() == []
    waiting = plan.results["input_x_gradient"]
    assert isinstance(waiting, Pending) and (waiting.forward, waiting.backward) == (1, 1)


def ensemble_of(*members: str) -> dict:
    return {"ensemble": {"members": ",".join(members)}}


def test_an_ensemble_costs_only_the_members_neither_cached_nor_chosen(classifier):
    encoding = classifier.encode(TEXT)
    classifier.logits_of(encoding)  # memoized per classifier: the ensemble's own read of the prediction is free
    members = ("leave_one_out", "occlusion", "attention")
    alone = make_plan(choices("ensemble", **ensemble_of(*members)), classifier, encoding, None, budget=1e9)
    expected = [create(m).estimate_passes(encoding) for m in members]
    item = alone.run_now[0]
    assert (item.forward, item.backward) == (sum(f for f, _ in expected), sum(b for _, b in expected))

    # all three members chosen on the page: the ensemble reads them from the cache, it costs nothing itself
    page = make_plan(choices("ensemble", *members, **ensemble_of(*members)), classifier, encoding, None, budget=1e9)
    item = next(i for i in page.run_now if i.method_id == "ensemble")
    assert (item.forward, item.backward, item.seconds) == (0, 0, 0.0)
    rows = cost_rows(choices("ensemble", *members, **ensemble_of(*members)), classifier, encoding, None)
    assert (rows[0]["forward passes"], rows[0]["estimated seconds"]) == (0, 0.0)

    # one member cached by an earlier page: only the other two are counted
    explain_cached(create("occlusion"), classifier, encoding, None)
    partly = make_plan(choices("ensemble", **ensemble_of(*members)), classifier, encoding, None, budget=1e9)
    item = partly.run_now[0]
    assert item.forward == expected[0][0] + expected[2][0]
    run_now(partly, classifier, encoding, None)
    ensemble = partly.results["ensemble"]
    assert isinstance(ensemble, Explanation)
    assert ensemble.provenance["forward_passes"] <= item.forward  # the estimate covered what it ran


def test_an_ensembles_members_that_share_a_pass_count_it_once(classifier):
    encoding = classifier.encode(TEXT)
    ensemble = create("ensemble", members="saliency,input_x_gradient")
    assert ensemble.estimate_passes(encoding) == (1, 1)
    plan = make_plan(choices("ensemble", **ensemble_of("saliency", "input_x_gradient")), classifier, encoding, None,
                     budget=1e9)
    assert (plan.run_now[0].forward, plan.run_now[0].backward) == (1, 1)
    run_now(plan, classifier, encoding, None)
    assert plan.results["ensemble"].provenance["backward_passes"] == 1  # the members shared one backward pass
