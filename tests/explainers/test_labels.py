"""label_for: the one display label of a method id or "method:preset" spec (legends, tables, headings)."""
from __future__ import annotations

import pytest

from explainers import REGISTRY, label_for


def test_every_registered_id_gets_its_class_label():
    for method_id, cls in REGISTRY.items():
        assert label_for(method_id) == cls.label and cls.label and cls.label != method_id


def test_presets_and_overrides_follow_the_label():
    preset = next(iter(REGISTRY["lime"].presets))
    assert label_for("input_x_gradient") == "Input x Gradient"
    assert label_for(f"lime:{preset}") == f"LIME ({preset})"
    assert label_for(f" LIME:{preset} ", {"n_samples": 50, "seed": 1}) == f"LIME ({preset}, n_samples=50, seed=1)"
    assert label_for("saliency", {"output": "l2"}) == "Saliency (gradient; output=l2)"
    assert label_for(f"lime:{preset} (n_samples=50)") == f"LIME ({preset}, n_samples=50)"  # the sanity page's names


@pytest.mark.parametrize("name", ["random baseline", "ig", "chance (random rankings)", ""])
def test_names_that_are_no_method_come_back_unchanged(name):
    assert label_for(name) == name
