"""The selection-metric rule: AML scored by the metric it was selected on gets a warning; scored by
any other metric, or any method not selected on a metric, gets none."""
from __future__ import annotations

import dataclasses

import pytest

from evaluation.faithfulness.presets import BY_ID
from evaluation.faithfulness.selection_bias import selection_metric_of, selection_warning, selection_warnings
from explainers import REGISTRY, create, label_for
from explainers.mask_learning.selection import METRICS


@pytest.mark.parametrize("name", list(METRICS))
def test_aml_is_flagged_exactly_on_the_metric_it_was_selected_on(name):
    selected = METRICS[name]
    assert selected.id in BY_ID and BY_ID[selected.id].higher_is_better == selected.higher_is_better
    params = {"tuned_for": name}
    assert selection_metric_of("aml", params) == selected.id
    message = selection_warning("aml", [selected.id, "deletion-auc"], params)
    assert message is not None and f"tuned for {BY_ID[selected.id].label}" in message
    assert "optimistic by construction" in message
    others = [m for m in BY_ID if m != selected.id]
    assert selection_warning("aml", others, params) is None


def test_the_preset_and_the_default_are_read_from_the_spec():
    assert selection_metric_of("aml") == METRICS["aopc-comprehensiveness"].id  # paper 004 Table 3's choice
    assert selection_metric_of("aml:fAML") == METRICS["aopc-comprehensiveness"].id
    assert selection_warning("aml:fAML", ["comprehensiveness-eraser"]).startswith(
        f"{label_for('aml:fAML')} is tuned for Comprehensiveness (AOPC)")  # the label readers see


def test_methods_not_selected_on_a_metric_are_never_flagged():
    every_metric = list(BY_ID)
    for method_id in REGISTRY:
        if method_id == "aml":
            continue
        assert selection_warning(method_id, every_metric) is None, method_id
    assert selection_warning("no-such-method", every_metric) is None  # reported where the spec is used


def test_an_explanation_carries_its_selection_metric(keyword_classifier):
    explanation = create("saliency").explain(keyword_classifier, keyword_classifier.encode("an excellent film"))
    assert selection_warning(explanation, list(BY_ID)) is None
    tuned = dataclasses.replace(explanation, method_label="AML", provenance={
        **explanation.provenance, "details": {"tuned_for": "sufficiency-004"}})  # as AML records it
    assert "tuned for Sufficiency" in selection_warning(tuned, ["sufficiency-004"])
    assert selection_warning(tuned, ["sufficiency-eraser"]) is None
    assert selection_warnings([tuned, tuned, explanation], ["sufficiency-004"]) == [
        selection_warning(tuned, ["sufficiency-004"])]  # once per message
