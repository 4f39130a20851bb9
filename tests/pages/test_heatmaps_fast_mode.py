"""The Heatmaps page's opt-in fast mode, with AppTest and the real default-quick model: off by default,
the explanations in reduced precision when on (equal to the fast view's own explanation), the prediction and the
export's probabilities in full precision, and a disabled toggle that says why where the device has no fast
precision."""
from __future__ import annotations

import numpy as np
import pytest
import torch

pytestmark = pytest.mark.integration

from test_heatmaps_page import open_page

METHODS = ["leave_one_out", "saliency"]


@pytest.fixture()
def page_env(quick_classifier, monkeypatch):
    """default-quick as the app's model; explanations cached in memory only (not in the user's cache)."""
    from explainers import cache

    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    yield quick_classifier
    cache.DEFAULT_CACHE.clear()


def finished_bundle(at):
    """The export bundle once every chosen method has a heatmap (the page computes in the background)."""
    for _ in range(60):
        bundle = at.session_state["heatmaps:export"]
        if sorted(e.method_id for e in bundle.explanations) == sorted(METHODS):
            return bundle
        at.run()
        assert not at.exception, at.exception
    raise AssertionError("the methods did not finish")


def test_fast_mode_is_opt_in_and_explains_in_reduced_precision(page_env, monkeypatch):
    from explainers import create
    from models import precision

    quick = page_env
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: True)  # the toggle as a CPU with native bf16 shows it
    at = open_page(methods=METHODS)
    toggle = at.toggle(key="fast-mode")
    assert toggle.value is False and not toggle.disabled  # off by default
    full = finished_bundle(at)
    assert {e.provenance["input"]["precision"]["mode"] for e in full.explanations} == {"full"}
    assert full.context["explanations_precision"] == "float32"

    toggle.set_value(True)
    at.run()
    assert not at.exception, at.exception
    assert any("Fast mode: the explanations below run in bfloat16" in c.value for c in at.caption)
    fast = finished_bundle(at)
    assert fast.context["explanations_precision"] == "bfloat16 autocast (fast mode)"
    encoding = quick.encode(fast.context["text"], fast.context["pair"])
    # the prediction (and the export's probabilities) stay full precision: computed here another way
    expected = quick.proba_of(encoding)
    assert list(fast.context["probabilities"].values()) == pytest.approx(expected.tolist(), abs=1e-7)
    view = quick.fast_variant(torch.bfloat16)
    target = int(np.argmax(expected))
    assert fast.context["explained"] == quick.labels[target]  # no near tie here: both precisions predict it
    for explanation in fast.explanations:
        recorded = explanation.provenance["input"]["precision"]
        assert recorded["mode"] == "fast" and recorded["autocast"] == "bfloat16"
        same = create(explanation.method_id).explain(view, encoding, target)  # the fast view called directly
        np.testing.assert_allclose(explanation.word_scores, same.word_scores, rtol=1e-5, atol=1e-6)
        before = next(e for e in full.explanations if e.method_id == explanation.method_id)
        assert not np.array_equal(explanation.word_scores, before.word_scores)  # reduced precision is visible


def test_without_a_fast_precision_the_toggle_is_disabled_and_says_why(page_env, monkeypatch):
    from models import precision

    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    at = open_page(methods=METHODS)
    toggle = at.toggle(key="fast-mode")
    assert toggle.disabled and toggle.value is False
    assert "no native bfloat16 kernels" in toggle.help
    bundle = finished_bundle(at)
    assert {e.provenance["input"]["precision"]["mode"] for e in bundle.explanations} == {"full"}
