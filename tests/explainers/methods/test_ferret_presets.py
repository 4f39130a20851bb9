"""The presets that reproduce ferret-xai's six default explainers: LIME's n_tokens^2 samples, plain IG (not
multiplied by x - b) and IG x input against path gradients by hand, and ferret's Gradient = L1 of the gradient."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from captum.attr._utils.approximation_methods import approximation_parameters
from tolerances import float32_tolerance

from explainers import create
from explainers.embedding_forward import baseline_embeddings, embedding_function

TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def path_gradients(classifier, encoding, target, n_steps):
    """(x - b, sum over the Gauss-Legendre path of weight x gradient), both (tokens, hidden), by autograd."""
    forward, x = embedding_function(classifier, encoding, "logit")
    b = baseline_embeddings(classifier, encoding, "pad")
    step_sizes, alphas = approximation_parameters("gausslegendre")
    total = torch.zeros_like(x[0])
    for weight, alpha in zip(step_sizes(n_steps), alphas(n_steps)):
        point = (b + alpha * (x - b)).clone().requires_grad_()
        (gradient,) = torch.autograd.grad(forward(point)[0, target], point)
        total += weight * gradient[0]
    return (x - b)[0], total


@pytest.mark.parametrize("preset", ["ferret", "ferret-plain"])
def test_integrated_gradients_ferret_presets_match_path_gradients_by_hand(smooth, preset):
    encoding = smooth.encode(TEXT)
    difference, averaged = path_gradients(smooth, encoding, 1, 50)
    terms = difference * averaged if preset == "ferret" else averaged
    explanation = create("integrated_gradients", preset=preset).explain(smooth, encoding, target=1)
    np.testing.assert_allclose(explanation.token_scores, terms.sum(-1).numpy(), rtol=0,
                               atol=float32_tolerance(terms.abs().sum(-1)) * 50)


def test_ferret_gradient_is_the_l1_norm_of_the_logit_gradient(smooth):
    encoding = smooth.encode(TEXT)
    forward, x = embedding_function(smooth, encoding, "logit")
    x = x.clone().requires_grad_()
    (gradient,) = torch.autograd.grad(forward(x)[0, 0], x)
    explanation = create("saliency", preset="ferret").explain(smooth, encoding, target=0)
    expected = gradient[0].abs().sum(-1)
    np.testing.assert_allclose(explanation.token_scores, expected.numpy(), rtol=0, atol=float32_tolerance(expected))


@pytest.mark.parametrize("text, cap", [(TEXT, 5000), (TEXT, 50), ("good", 5000)])
def test_lime_ferret_draws_min_of_tokens_squared_and_the_cap(smooth, text, cap):
    encoding = smooth.encode(text)
    explanation = create("lime", preset="ferret", n_samples=cap).explain(smooth, encoding, target=1)
    expected = min(encoding.n_tokens ** 2, cap)  # [CLS] and [SEP] counted, as ferret's len(token_ids)
    assert explanation.provenance["details"]["samples"] == expected
    assert explanation.provenance["details"]["perturbations_requested"] == expected
    assert create("lime", preset="ferret", n_samples=cap).estimate_passes(encoding)[0] == expected + 1


def test_lime_fixed_sample_count_is_unchanged(smooth):
    encoding = smooth.encode(TEXT)
    explanation = create("lime", n_samples=40).explain(smooth, encoding, target=1)
    assert explanation.provenance["details"]["samples"] == 40
