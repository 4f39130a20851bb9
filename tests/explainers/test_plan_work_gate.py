"""``plan.work_gate``: the plan's rule for a page's other single-input work (the Sanity page's stages x methods):
cached -> shown, stopped -> waits, within the auto-run budget in work units at the model's nominal rate -> runs now,
else waits until a click approves it. The budget line is computed here by hand: seconds x nominal units/s."""
from __future__ import annotations

import pytest

from explainers import plan
from models import TextClassifier
from models.metering import Throughput, runs_at_once, work_units


@pytest.fixture()
def classifier(keyword_classifier):
    """The keyword model at a nominal 1000 work units/s, measured ten times slower (the gate must not read that)."""
    throughput = Throughput(1000.0)
    throughput.record_batch(10, 100, 12.5)
    return TextClassifier(keyword_classifier.model, keyword_classifier.tokenizer, name="tiny-keyword-gate",
                          fingerprint=keyword_classifier.fingerprint, device="cpu", throughput=throughput)


def test_the_budget_is_seconds_at_the_nominal_rate(classifier):
    assert plan.work_gate(3, 2000.0, classifier, approved=False, budget=2.0) == plan.RUN_NOW  # 2 s x 1000 units/s
    assert plan.work_gate(3, 2000.5, classifier, approved=False, budget=2.0) == plan.WAIT
    assert plan.work_gate(3, 2000.5, classifier, approved=True, budget=2.0) == plan.RUN_NOW


def test_nothing_missing_is_cached_and_a_stop_waits_even_when_cheap_or_approved(classifier):
    assert plan.work_gate(0, 1e12, classifier, approved=False, stopped=True, budget=2.0) == plan.CACHED
    assert plan.work_gate(1, 1.0, classifier, approved=True, stopped=True, budget=2.0) == plan.WAIT


@pytest.mark.parametrize("forward, backward", [(10, 0), (40, 20), (400, 0)])
def test_it_decides_as_a_method_plan_does_for_the_same_work(classifier, forward, backward):
    units = work_units(forward, backward, 20)
    expected = plan.RUN_NOW if runs_at_once(classifier, forward, backward, 20, 1.0) else plan.WAIT
    assert plan.work_gate(1, units, classifier, approved=False, budget=1.0) == expected
