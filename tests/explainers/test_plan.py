"""explainers/plan.py on the tiny keyword model: cached vs run now vs waiting for a click, ensembles after their
members, background jobs (progress from the method's own batches, Stop that keeps nothing of the stopped method)."""
from __future__ import annotations

import time

import numpy as np
import pytest
from tiny_models import FILLER

from explainers import Explanation, create
from explainers.cache import DEFAULT_CACHE, cache_key, cached_only, explain_cached
from explainers.choices import MethodChoice
from explainers.method_jobs import DONE, RUNNING, STOPPED, MethodJob, MethodJobs, Planned
from explainers.plan import (
    Pending,
    cost_rows,
    estimate,
    make_plan,
    run_now,
    settled_rows,
    start_background,
)
from models import TextClassifier
from models.metering import Throughput, base_seconds, work_units

TEXT = "the movie was a film that this story had excellent scenes with actors and music"
LONG_TEXT = " ".join(FILLER[i % len(FILLER)] for i in range(50))  # 50 words: 2^50 distinct LIME masks


@pytest.fixture()
def classifier(keyword_classifier):
    """The keyword model with its own measured speed, 1000 work units/s (the session fixture's is shared)."""
    throughput = Throughput(1000.0)  # the nominal rate the auto-run decision uses (models/metering.py rule (g))
    throughput.record_batch(10, 100, 1.25)  # 1000 tokens x 1.25 units / 1.25 s
    assert throughput.rate == pytest.approx(1000.0)
    DEFAULT_CACHE.clear()
    yield TextClassifier(keyword_classifier.model, keyword_classifier.tokenizer, name="tiny-keyword-plan",
                         fingerprint=keyword_classifier.fingerprint, device="cpu", throughput=throughput)
    DEFAULT_CACHE.clear()


def choices(*method_ids, **overrides) -> list[MethodChoice]:
    return [MethodChoice(m, None, overrides.get(m, {})) for m in method_ids]


def test_cached_methods_are_served_cheap_ones_run_now_and_costly_ones_wait(classifier):
    encoding = classifier.encode(TEXT)
    explain_cached(create("attention"), classifier, encoding, None)
    lime, saliency = create("lime"), create("saliency")
    forward, backward = lime.estimate_passes(encoding)
    lime_seconds = (forward + 2 * backward) * encoding.n_tokens * (1 + encoding.n_tokens / 400) / 1000.0
    assert estimate(lime, classifier, encoding) == (forward, backward, pytest.approx(lime_seconds, rel=1e-12))
    saliency_seconds = estimate(saliency, classifier, encoding)[2]
    budget = (saliency_seconds + lime_seconds) / 2
    assert saliency_seconds < budget < lime_seconds

    plan = make_plan(choices("attention", "saliency", "lime"), classifier, encoding, None, budget=budget)
    assert plan.results["attention"].provenance["cache"] == "memory"
    assert [item.method_id for item in plan.run_now] == ["saliency"]
    waiting = plan.results["lime"]
    assert isinstance(waiting, Pending) and waiting.approval_key == cache_key(classifier, encoding, lime, None)
    assert (waiting.forward, waiting.backward, waiting.seconds) == (forward, backward, pytest.approx(lime_seconds))
    assert plan.background == []

    approved = {waiting.approval_key}
    inline = make_plan(choices("lime"), classifier, encoding, None, approved, budget=budget)
    assert [item.method_id for item in inline.run_now] == ["lime"]  # pages that do not poll run it inline
    polled = make_plan(choices("lime"), classifier, encoding, None, approved, budget=budget, background=True)
    assert [item.method_id for item in polled.background] == ["lime"] and polled.run_now == []

    rows = cost_rows(choices("attention", "saliency", "lime"), classifier, encoding, None)
    assert [r["status"] for r in rows] == ["cached", "to compute", "to compute"]
    run_now(plan, classifier, encoding, None)
    settled = settled_rows(rows, choices("attention", "saliency", "lime"), plan.results)
    assert [r["status"] for r in settled.rows] == ["cached", "computed", "waiting for a Run click"]
    assert settled.rows[1]["measured seconds"] == round(plan.results["saliency"].provenance["seconds"], 2)


def test_a_method_that_ran_teaches_its_estimate(classifier):
    encoding = classifier.encode(TEXT)
    plan = make_plan(choices("occlusion"), classifier, encoding, None, budget=1e9)
    planned = plan.run_now[0]
    assert classifier.throughput.factor("occlusion") == 1.0
    run_now(plan, classifier, encoding, None)
    measured = plan.results["occlusion"].provenance["seconds"]
    # the factor moves halfway from 1 to measured / the estimate at the rate the run's own batches left (clamped)
    base = base_seconds(classifier.throughput, planned.forward, planned.backward, encoding.n_tokens)
    observed = min(max(measured / base, 0.25), 4.0)
    assert classifier.throughput.factor("occlusion") == pytest.approx(0.5 + 0.5 * observed, rel=1e-12)
    again = estimate(create("occlusion"), classifier, encoding)[2]
    assert again == pytest.approx(base * classifier.throughput.factor("occlusion"), rel=1e-12)
    learned = classifier.throughput.factor("occlusion")
    cached = make_plan(choices("occlusion"), classifier, encoding, None, budget=1e9)
    assert cached.run_now == [] and cached.results["occlusion"].provenance["cache"] == "memory"
    assert classifier.throughput.factor("occlusion") == learned  # a cache hit teaches nothing


def test_errors_become_messages(classifier):
    encoding = classifier.encode(TEXT)
    plan = make_plan(choices("lime", "saliency", lime={"n_samples": 1}), classifier, encoding, None, budget=1e9)
    assert isinstance(plan.results["lime"], str) and "10" in plan.results["lime"]  # the minimum, from the schema
    assert [item.method_id for item in plan.run_now] == ["saliency"]  # the others still run


def test_ensembles_run_after_their_members_and_read_them_from_the_cache(classifier):
    encoding = classifier.encode(TEXT)
    picked = choices("ensemble", "saliency", "occlusion", ensemble={"members": "saliency,occlusion"})
    plan = make_plan(picked, classifier, encoding, None, budget=1e9)
    assert [item.method_id for item in plan.run_now] == ["saliency", "occlusion", "ensemble"]
    run_now(plan, classifier, encoding, None)
    ensemble = plan.results["ensemble"]
    assert isinstance(ensemble, Explanation)
    assert ensemble.provenance["forward_passes"] == 0  # both members came from the cache
    assert list(plan.ordered(picked)) == ["ensemble", "saliency", "occlusion"]  # shown in the order chosen


def wait_until(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the background job did not get there"
        time.sleep(0.01)


def test_an_approved_long_method_runs_in_the_background_and_is_handed_over_once(classifier):
    encoding = classifier.encode(TEXT)
    jobs = MethodJobs()
    lime = create("lime")
    key = cache_key(classifier, encoding, lime, None)
    plan = make_plan(choices("lime"), classifier, encoding, None, {key}, budget=0, background=True, jobs=jobs)
    start_background(plan, classifier, encoding, None, jobs=jobs)
    job = plan.results["lime"]
    assert isinstance(job, MethodJob) and jobs.get(key) is job
    job.wait(120)
    assert job.status == DONE and job.progress().fraction == 1.0
    rows = cost_rows(choices("lime"), classifier, encoding, None)  # the page's cost table, drawn before the plan
    assert rows[0]["status"] == "cached"
    handed = make_plan(choices("lime"), classifier, encoding, None, {key}, budget=0, background=True, jobs=jobs)
    fresh = handed.results["lime"]
    assert isinstance(fresh, Explanation) and "cache" not in fresh.provenance
    settled = settled_rows(rows, choices("lime"), handed.results)
    assert settled.computed == 1 and settled.rows[0]["status"] == "computed"  # what this page's click computed
    assert jobs.get(key) is None
    later = make_plan(choices("lime"), classifier, encoding, None, {key}, budget=0, background=True, jobs=jobs)
    assert later.results["lime"].provenance["cache"] == "memory"


def test_stop_ends_a_running_method_at_its_next_batch_and_keeps_nothing_of_it(classifier):
    encoding = classifier.encode(LONG_TEXT)
    lime = create("lime", n_samples=4000)
    forward, backward, seconds = estimate(lime, classifier, encoding)
    planned = Planned(MethodChoice("lime", None, {"n_samples": 4000}), lime,
                      cache_key(classifier, encoding, lime, None), forward, backward, seconds)
    jobs = MethodJobs()
    job = jobs.start(planned, classifier, encoding, None)
    wait_until(lambda: job.meter is not None and job.meter.batches >= 1)
    progress = job.progress()
    assert job.status == RUNNING and 0 < progress.forward < forward and 0 < progress.fraction < 1
    job.stop(wait=60)
    assert job.status == STOPPED
    stopped_at = job.progress()
    assert stopped_at.forward < forward and stopped_at.left == 0.0
    assert cached_only(lime, classifier, encoding, None) is None  # nothing of the stopped method is kept
    again = make_plan([planned.choice], classifier, encoding, None, {planned.key}, budget=0, background=True, jobs=jobs)
    assert again.results["lime"] is job and again.background == []  # it waits for "Run again", not restarted
    restarted = jobs.restart(job)
    assert restarted is not job and restarted.running
    restarted.stop(wait=60)
    assert restarted.status == STOPPED


def test_a_job_stopped_before_it_starts_does_no_work(classifier):
    encoding = classifier.encode(TEXT)
    saliency = create("saliency")
    planned = Planned(MethodChoice("saliency", None, {}), saliency, cache_key(classifier, encoding, saliency, None),
                      1, 1, 0.1)
    job = MethodJob(planned, classifier, encoding, None)
    job.stop()
    job.start().wait(60)
    assert job.status == STOPPED and job.meter.forward_passes == 0
    assert cached_only(saliency, classifier, encoding, None) is None


# ----- MaRC in the background: live steps, Stop keeps the last mask (not cached) --------------------------------
def marc_planned(classifier, encoding, **params) -> Planned:
    marc = create("marc", **params)
    forward, backward, seconds = estimate(marc, classifier, encoding)
    return Planned(MethodChoice("marc", None, params), marc, cache_key(classifier, encoding, marc, None), forward,
                   backward, seconds)


def test_a_stopped_marc_job_keeps_its_last_mask_with_a_note_and_is_not_cached(classifier):
    encoding = classifier.encode(TEXT)
    planned = marc_planned(classifier, encoding, max_steps=5000, early_stop=False)
    jobs = MethodJobs()
    job = jobs.start(planned, classifier, encoding, None)
    wait_until(lambda: job.live is not None and job.live.step >= 3)
    live = job.live
    assert live.max_steps == 5000 and live.mask.shape == (encoding.n_words,)
    assert job.progress().fraction == pytest.approx(live.step / 5000, abs=1 / 5000)  # steps, not passes
    job.stop(wait=60)
    assert job.status == STOPPED and job.partial is not None
    partial = job.partial
    steps = partial.provenance["details"]["steps"]
    assert partial.provenance["details"]["stop_reason"] == "stopped" and steps >= 3
    assert any(f"Stopped at step {steps} of 5000" in w for w in partial.warnings)
    np.testing.assert_allclose(partial.word_scores, job.live.mask, rtol=1e-12)  # the mask of the last step shown
    assert cached_only(planned.explainer, classifier, encoding, None) is None  # not written to the cache
    again = make_plan([planned.choice], classifier, encoding, None, {planned.key}, budget=0, background=True,
                      jobs=jobs)
    assert again.results["marc"] is job  # the stopped row (last mask, Run again), not restarted


def test_a_completed_marc_job_is_cached_and_handed_over(classifier):
    encoding = classifier.encode(TEXT)
    planned = marc_planned(classifier, encoding, max_steps=6, early_stop=False)
    jobs = MethodJobs()
    job = jobs.start(planned, classifier, encoding, None)
    job.wait(120)
    assert job.status == DONE and job.partial is None and job.live.step == 6
    assert job.result.provenance["details"]["stop_reason"] == "step cap"
    cached = cached_only(planned.explainer, classifier, encoding, None)
    assert cached is not None
    np.testing.assert_array_equal(cached.word_scores, job.result.word_scores)


def _decisions(plan) -> tuple[list[str], dict[str, str]]:
    return [item.method_id for item in plan.run_now], {m: type(r).__name__ for m, r in plan.results.items()}


def test_what_runs_at_once_does_not_depend_on_the_measured_speed(classifier):
    """Ten browsers on one link see the same rows: the decision is the work in units against the budget at the
    nominal rate, so a measured speed 10x slower or faster (a loaded or an idle server) changes nothing; the input
    and the methods do."""
    encoding = classifier.encode(TEXT)
    picked = choices("saliency", "integrated_gradients", "leave_one_out", "lime")
    units = {m: work_units(*create(m).estimate_passes(encoding), encoding.n_tokens) for m in ("saliency", "lime")}
    budget = (units["saliency"] + units["lime"]) / 2 / classifier.throughput.nominal_rate  # seconds, between them
    plans = []
    for measured in (1000.0, 100.0, 10_000.0):
        classifier.throughput.measured_rate = measured
        plans.append(make_plan(picked, classifier, encoding, None, budget=budget))
    assert _decisions(plans[0]) == _decisions(plans[1]) == _decisions(plans[2])
    assert "saliency" in _decisions(plans[0])[0] and _decisions(plans[0])[1]["lime"] == "Pending"
    # the seconds shown still follow the measured speed
    assert plans[1].results["lime"].seconds == pytest.approx(10 * plans[0].results["lime"].seconds)

    classifier.throughput.measured_rate = 1000.0
    fewer = make_plan(choices("saliency", "leave_one_out"), classifier, encoding, None, budget=budget)
    assert _decisions(fewer) != _decisions(plans[0])  # other methods: another plan
    for text in (TEXT, LONG_TEXT):  # each input: the methods whose units fit the budget at the nominal rate
        coded = classifier.encode(text)
        fits = [m for m in ("saliency", "integrated_gradients", "leave_one_out", "lime")
                if work_units(*create(m).estimate_passes(coded), coded.n_tokens) <= budget * 1000.0]
        assert _decisions(make_plan(picked, classifier, coded, None, budget=budget))[0] == fits
    assert _decisions(make_plan(picked, classifier, classifier.encode(LONG_TEXT), None, budget=budget)) != \
        _decisions(plans[0])  # a longer input: another plan
