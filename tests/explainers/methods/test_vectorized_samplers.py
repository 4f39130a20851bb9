"""LIME, KernelSHAP and Shapley sampling computed on the whole sample matrix at once, against Captum's own
``Lime`` / ``KernelShap`` / ``ShapleyValueSampling`` drawing one sample at a time (``tests/captum_reference.py``,
the code they replaced), with the same seed and the same memoized forward, so both sides fit the same scores;
and the mask memo (de-duplication) against the engine run on every row, repeats included."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from captum_reference import (
    captum_kernel_shap,
    captum_lime,
    captum_shapley_sampling,
    kernel_function,
    uniform_count_sampler,
)
from tolerances import float32_tolerance

from explainers import create
from explainers.mask_forward import MaskForward, target_scores
from explainers.methods.kernel_shap import draw_coalitions, kernel_shap_values
from explainers.methods.lime import draw_uniform_count, fit_lime, kernel_weights
from explainers.methods.shapley_sampling import shapley_sampling_values
from explainers.seeding import seeded
from models.perturb import perturbed_logits

TEXT = "the movie was excellent and the music was long"
SHORT = "excellent music"


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def forward_for(classifier, text, operator="mask", score="probability", target=1):
    encoding = classifier.encode(text)
    return encoding, MaskForward(classifier, encoding, operator, target, score)


@pytest.mark.parametrize("text", [TEXT, SHORT])
@pytest.mark.parametrize("spec", [
    {}, {"preset": "paper-000"}, {"preset": "ferret"}, {"surrogate": "linear", "n_samples": 50, "seed": 3},
    {"sampling": "uniform-count", "kernel": "captum-exp", "seed": 5}, {"kernel": "lime-text", "kernel_width": 40.0},
])
def test_lime_equals_captums_lime(smooth, text, spec):
    spec = dict(spec)
    p = create("lime", preset=spec.pop("preset", None), **spec).params
    encoding, forward = forward_for(smooth, text, p.operator, p.score)
    ours = fit_lime(forward, encoding, p)
    n_samples = min(encoding.n_tokens ** 2, p.n_samples) if p.sample_count == "tokens-squared" else p.n_samples
    theirs = captum_lime(forward, encoding.n_words, n_samples, p).double().numpy()  # answered from the memo
    assert forward.requested == 2 * n_samples and forward.evaluated <= n_samples
    # the same float32 fit of the same float32 arrays: only the kernel weights' float64 formula differs
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=float32_tolerance(max(1.0, np.abs(theirs).max())))
    assert np.abs(theirs).max() > 1e-4


@pytest.mark.parametrize("n", [1, 3, 9, 40])
def test_uniform_count_draws_are_the_per_sample_generators(n):
    with seeded(4):
        generator = uniform_count_sampler(None, num_interp_features=n)
        expected = np.array([next(generator)[0].numpy() for _ in range(300)], dtype=bool)
        after = torch.rand(1)  # the stream continues where it would have
    with seeded(4):
        drawn = draw_uniform_count(300, n)
        assert torch.equal(torch.rand(1), after)
    np.testing.assert_array_equal(drawn, expected)


@pytest.mark.parametrize("kind,width", [("lime-text", 25.0), ("captum-exp", 1.0), ("captum-exp", 0.3)])
def test_kernel_weights_equal_the_per_sample_kernel(kind, width):
    rng = np.random.default_rng(0)
    keep = rng.random((200, 11)) < 0.4
    keep[0], keep[1] = True, False  # the original and the empty row (distance 1)
    similarity = kernel_function(kind, width)
    ones = torch.ones(1, 11, dtype=torch.float64)
    expected = [similarity(ones, torch.as_tensor(row, dtype=torch.float64)[None], None) for row in keep]
    np.testing.assert_allclose(kernel_weights(keep, kind, width), expected, rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("text,n_samples,seed", [(TEXT, 200, 0), (TEXT, 57, 8), (SHORT, 30, 2)])
def test_kernel_shap_equals_captums_kernel_shap(smooth, text, n_samples, seed):
    encoding, forward = forward_for(smooth, text, "mask", "logit", target=0)
    ours = kernel_shap_values(forward, encoding.n_words, n_samples, seed)
    theirs = captum_kernel_shap(forward, encoding.n_words, n_samples, seed).double().numpy()
    assert forward.evaluated < forward.requested == 2 * n_samples  # repeats answered from the memo
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=float32_tolerance(max(1.0, np.abs(theirs).max())))
    assert np.abs(theirs).max() > 1e-4


def test_kernel_shap_coalition_sizes_follow_the_shapley_kernel():
    n, draws = 12, 4000
    with seeded(1):
        keep = draw_coalitions(draws + 2, n)
    assert keep[0].all() and not keep[1].any()
    sizes = np.arange(1, n)
    p = (n - 1) / (sizes * (n - sizes))
    p /= p.sum()
    frequency = np.bincount(keep[2:].sum(axis=1), minlength=n)[1:] / draws
    assert frequency.sum() == 1.0  # every coalition has 1..n-1 words
    np.testing.assert_array_less(np.abs(frequency - p), 4 * np.sqrt(p * (1 - p) / draws))  # 4 standard errors


@pytest.mark.parametrize("text,n_samples,seed,operator", [(TEXT, 25, 0, "pad"), (TEXT, 7, 3, "mask"),
                                                          (SHORT, 40, 1, "delete")])
def test_shapley_sampling_equals_captums(smooth, text, n_samples, seed, operator):
    encoding, forward = forward_for(smooth, text, operator, "probability")
    ours = shapley_sampling_values(forward, encoding.n_words, n_samples, seed)
    requested = forward.requested
    theirs = captum_shapley_sampling(forward, encoding.n_words, n_samples, seed).double().numpy()
    assert requested == forward.requested - requested == 1 + n_samples * encoding.n_words
    # both keep Captum's float32 running sum of the same float64 differences
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=float32_tolerance(1.0))  # probabilities
    assert np.abs(theirs).max() > 1e-4


@pytest.mark.parametrize("operator", ["mask", "delete", "zero"])
def test_the_mask_memo_does_not_change_values(smooth, operator):
    encoding, forward = forward_for(smooth, TEXT, operator, "probability")
    rng = np.random.default_rng(5)
    distinct = rng.random((12, encoding.n_words)) < 0.5
    keep = distinct[rng.integers(0, 12, size=60)]  # 60 rows, at most 12 distinct
    memoized = forward.request(keep)
    every_row = target_scores(perturbed_logits(smooth, encoding, keep, operator), 1, "probability")
    np.testing.assert_allclose(memoized, every_row, rtol=0, atol=float32_tolerance(1.0))  # probabilities
    assert forward.evaluated == len(np.unique(keep, axis=0)) and forward.requested == 60
    np.testing.assert_array_equal(forward.request(keep[::-1]), memoized[::-1])  # answered again, identically
    assert forward.evaluated == len(np.unique(keep, axis=0))


@pytest.mark.parametrize("method", ["lime", "kernel_shap", "shapley_sampling"])
def test_each_method_asks_for_its_samples_once(smooth, method, monkeypatch):
    """One request for every sample (Captum's Shapley sampling asked once per permutation, and ran twice: once to
    record the masks, once to be answered)."""
    calls = []
    original = MaskForward.request

    def counting(self, keep):
        calls.append(len(keep))
        return original(self, keep)

    monkeypatch.setattr(MaskForward, "request", counting)
    encoding = smooth.encode(f"{TEXT} {method}")
    create(method).explain(smooth, encoding, target=1)
    assert len(calls) == 1
