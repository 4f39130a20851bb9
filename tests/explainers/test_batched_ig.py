"""IG paths of several inputs in shared batches (dataset runs) equal the paths computed one at a time."""
from __future__ import annotations

import numpy as np
import pytest
from tolerances import float32_tolerance

from explainers import create
from explainers.shared_passes import ig_pass, ig_paths, prefill_ig_paths, sharing
from models.metering import metered

TEXTS = ["the movie was excellent", "a long and dull film about nothing at all , really",
         "excellent", "the music was long and the plot was not excellent"]
SAME_LENGTH = ["the movie was excellent", "the music was long", "a film was excellent", "the plot was dull"]


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def _tolerance(path) -> float:
    """Float32 reordering of a sum over the path: ulps of the largest per-token sum of |attribution|."""
    return float32_tolerance(path.attribution[0].abs().sum(dim=-1).numpy())


@pytest.mark.parametrize("baseline,output,rule", [("pad", "logit", "gausslegendre"),
                                                  ("zero", "probability", "riemann_right")])
def test_batched_paths_equal_one_at_a_time(smooth, baseline, output, rule):
    encodings = [smooth.encode(text) for text in TEXTS]
    assert len({e.n_tokens for e in encodings}) == len(TEXTS)  # padding is exercised
    targets = [1, 0, 1, 0]
    params = create("integrated_gradients", n_steps=20, baseline=baseline, output=output, method=rule).params
    batched = ig_paths(smooth, encodings, targets, params)
    for encoding, target, path in zip(encodings, targets, batched):
        alone = ig_pass(smooth, encoding, target, params)
        assert path.attribution.shape == alone.attribution.shape
        np.testing.assert_allclose(path.attribution.sum(dim=-1).numpy(), alone.attribution.sum(dim=-1).numpy(),
                                   rtol=0, atol=_tolerance(alone))
        assert path.gap == pytest.approx(alone.gap, abs=float32_tolerance(abs(alone.f_input) + abs(alone.gap)))
        # a logit near 0 is a difference of activations of order 1: its rounding is relative to those, not to itself
        assert path.f_input == pytest.approx(alone.f_input, abs=float32_tolerance(max(1.0, abs(alone.f_input))))
        assert path.delta == pytest.approx(alone.delta, abs=_tolerance(alone) + float32_tolerance(alone.f_input))
        assert path.batch["inputs"] == len(TEXTS)
    assert batched[0].batch["forward_passes"] == len(TEXTS) * (20 + 2)  # every path point and end, once


def test_a_dataset_group_is_served_from_the_prefilled_paths(smooth):
    """Inside ``sharing()``, prefilled paths are what IG explains with: no pass of its own, the same scores as
    alone (float32), and the provenance says where the path was computed."""
    encodings = [smooth.encode(text) for text in SAME_LENGTH]
    assert len({e.n_tokens for e in encodings}) == 1  # one group (no padding)
    explainer = create("integrated_gradients", n_steps=20)
    alone = [explainer.explain(smooth, e, 1) for e in encodings]
    with sharing():
        assert prefill_ig_paths(smooth, encodings, [1] * len(SAME_LENGTH), [explainer, create("saliency")]) == len(SAME_LENGTH)
        assert prefill_ig_paths(smooth, encodings, [1] * len(SAME_LENGTH), [explainer]) == 0  # already there
        with metered() as meter:
            served = [explainer.explain(smooth, e, 1) for e in encodings]
    assert meter.forward_passes == 0
    for one, batch in zip(alone, served):
        path = ig_pass(smooth, smooth.encode(" ".join(one.words)), 1, explainer.params)
        np.testing.assert_allclose(batch.token_scores, one.token_scores, rtol=0, atol=_tolerance(path))
        assert batch.provenance["details"]["path_computed_in_batch"]["inputs"] == len(SAME_LENGTH)
    with metered() as meter:  # outside sharing() nothing is prefilled: each input computes its own path
        assert prefill_ig_paths(smooth, encodings, [1] * len(SAME_LENGTH), [explainer]) == 0
    assert meter.forward_passes == 0


def test_groups_follow_the_token_budget(smooth, monkeypatch):
    """Length-sorted groups whose path points fill at most GROUP_FORWARDS forwards of the token budget, with little
    padding; no forward over the budget (the sizes of the forwards are recorded on the way to the real model)."""
    from explainers.shared_passes import GROUP_FORWARDS, MAX_PADDING

    short = [smooth.encode(f"word number {i} here") for i in range(10)]
    long = [smooth.encode(f"word number {i} here and there and then more") for i in range(3)]
    width = short[0].n_tokens
    assert {e.n_tokens for e in short} == {width} and all(e.n_tokens > width for e in long)
    explainer = create("integrated_gradients", n_steps=10)
    monkeypatch.setattr(smooth, "max_batch_tokens", 20 * width)  # two short paths of 10 steps per forward
    shapes, real = [], smooth.forward_embeds

    def recording(inputs_embeds, *args):
        shapes.append(tuple(inputs_embeds.shape[:2]))
        return real(inputs_embeds, *args)

    monkeypatch.setattr(smooth, "forward_embeds", recording)
    with sharing():
        assert prefill_ig_paths(smooth, [*long, *short], [1] * 13, [explainer]) == 13
    long_width = long[0].n_tokens
    # length-sorted groups of inputs whose paths (10 points each) fit GROUP_FORWARDS x 120 = 480 tokens and whose
    # padding stays under MAX_PADDING: 8 short (8 x 10 x 6 = 480), the other 2 short (a long one would pad them),
    # the 3 long (3 x 10 x 11 = 330); steps per forward = 120 // (inputs x width): 2, 10, 3 (Captum's last chunk
    # holds the step left over); each group ends with one forward of its x and b
    assert GROUP_FORWARDS == 4 and MAX_PADDING < 5 / 11 and (width, long_width) == (6, 11)
    assert shapes == [(16, 6)] * 5 + [(16, 6)] + [(20, 6), (4, 6)] + [(9, 11)] * 3 + [(3, 11)] + [(6, 11)]
    assert all(rows * tokens <= 20 * width for rows, tokens in shapes)
