"""Paper 002's `_n` baselines (App. A.1): Input x Gradient and Integrated Gradients reduced by the L1 norm
over the embedding dimension (presets ``l1-norm``), against autograd by hand and Captum's IntegratedGradients called
directly on the plain embedding function."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from captum.attr import IntegratedGradients as CaptumIG
from tolerances import float32_tolerance

from explainers import create, create_from_spec
from explainers.embedding_forward import baseline_embeddings, embedding_function

TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def test_input_x_gradient_l1_is_the_l1_norm_of_embedding_times_gradient(smooth):
    encoding = smooth.encode(TEXT)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    x = embeddings.clone().requires_grad_()
    (gradient,) = torch.autograd.grad(forward(x)[0, 1], x)
    expected = (embeddings[0] * gradient[0]).abs().sum(-1)
    explanation = create_from_spec("input_x_gradient:l1-norm").explain(smooth, encoding, target=1)
    np.testing.assert_allclose(explanation.token_scores, expected.numpy(), rtol=0, atol=float32_tolerance(expected))
    assert explanation.provenance["params"]["reduction"] == "l1" and not create_from_spec(
        "input_x_gradient:l1-norm").is_signed()
    assert (explanation.token_scores >= 0).all()


def test_integrated_gradients_l1_against_captum_per_dimension(smooth):
    encoding = smooth.encode(TEXT)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    baseline = baseline_embeddings(smooth, encoding, "pad")
    per_dimension = CaptumIG(forward).attribute(embeddings, baselines=baseline, target=1, n_steps=50,
                                                method="gausslegendre")[0].detach()
    expected = per_dimension.abs().sum(-1)
    explanation = create_from_spec("integrated_gradients:l1-norm").explain(smooth, encoding, target=1)
    np.testing.assert_allclose(explanation.token_scores, expected.numpy(), rtol=1e-4,
                               atol=float32_tolerance(expected))
    # the signed sum (completeness) is what the details keep; the scores are its L1 counterpart
    assert explanation.provenance["details"]["sum_of_attributions"] == pytest.approx(
        float(per_dimension.sum()), rel=1e-4, abs=1e-5)
    signed = create("integrated_gradients").explain(smooth, encoding, target=1)
    assert (explanation.token_scores + 1e-6 >= np.abs(signed.token_scores)).all()  # |sum| <= sum |.|
