"""Gradient-family methods against values computed another way (autograd by hand, Captum called directly)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from captum.attr import DeepLift as CaptumDeepLift
from captum.attr import GradientShap as CaptumGradientShap
from captum.attr import NoiseTunnel
from captum.attr import Saliency as CaptumSaliency
from tolerances import float32_tolerance

from explainers import create
from explainers.embedding_forward import baseline_embeddings, embedding_function
from explainers.methods.saliency import VANISHING_SUM

TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def seed_everything(seed: int) -> None:  # Captum samples from torch's, numpy's and Python's generators
    import random

    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def by_hand_gradient(classifier, encoding, target, output="logit"):
    forward, embeddings = embedding_function(classifier, encoding, output)
    x = embeddings.clone().requires_grad_()
    (gradient,) = torch.autograd.grad(forward(x)[0, target], x)
    return embeddings[0], gradient[0]


def test_saliency_reductions_match_autograd(smooth):
    encoding = smooth.encode(TEXT)
    _, gradient = by_hand_gradient(smooth, encoding, 1)
    matrix = smooth.model.get_input_embeddings().weight.detach()
    expected = {"l2": gradient.norm(dim=-1), "sum": gradient.sum(-1), "l1": gradient.abs().sum(-1),
                "onehot-l2": (matrix @ gradient.T).T.norm(dim=-1)}
    for reduction, values in expected.items():
        explanation = create("saliency", reduction=reduction).explain(smooth, encoding, target=1)
        size = gradient.abs().sum(-1) if reduction == "sum" else values  # the size of the terms reduced
        np.testing.assert_allclose(explanation.token_scores, values.numpy(), rtol=0, atol=float32_tolerance(size))


def test_input_x_gradient_is_embedding_dot_gradient(smooth):
    encoding = smooth.encode(TEXT)
    embeddings, gradient = by_hand_gradient(smooth, encoding, 0)
    explanation = create("input_x_gradient").explain(smooth, encoding, target=0)
    size = (embeddings * gradient).abs().sum(-1)
    np.testing.assert_allclose(explanation.token_scores, (embeddings * gradient).sum(-1).numpy(), rtol=0,
                               atol=float32_tolerance(size))
    absolute = create("input_x_gradient", preset="paper-001-code").explain(smooth, encoding, target=0)
    np.testing.assert_allclose(absolute.token_scores, np.abs(explanation.token_scores), rtol=0,
                               atol=float32_tolerance(size))


def test_paper_001_presets_follow_the_text_and_the_code_variants_take_the_absolute_value(smooth):
    """Paper 001's text (section 4, Eq. 2) is signed; its reference code returns |.| (seeds-000-001.md 001.2)."""
    encoding = smooth.encode(TEXT)
    embeddings, gradient = by_hand_gradient(smooth, encoding, 0)
    dot = (embeddings * gradient).sum(-1).numpy()
    size = (embeddings * gradient).abs().sum(-1)
    assert (dot < 0).any() and (dot > 0).any()  # the two conventions differ on this input
    text = create("input_x_gradient", preset="paper-001").explain(smooth, encoding, target=0)
    code = create("input_x_gradient", preset="paper-001-code").explain(smooth, encoding, target=0)
    np.testing.assert_allclose(text.token_scores, dot, rtol=0, atol=float32_tolerance(size))
    np.testing.assert_allclose(code.token_scores, np.abs(dot), rtol=0, atol=float32_tolerance(size))
    assert text.signed and not code.signed
    # IG: right Riemann sum over a zero baseline written out by hand (Eq. 2), signed, and its |.| for the code
    forward, x = embedding_function(smooth, encoding, "logit")
    steps = 50
    total = torch.zeros_like(x)
    for i in range(1, steps + 1):
        point = (i / steps * x).requires_grad_()
        (grad,) = torch.autograd.grad(forward(point)[0, 0], point)
        total += grad
    terms = (x * total / steps)[0]
    by_hand = terms.sum(-1).numpy()
    tolerance = float32_tolerance(terms.abs().sum(-1) * steps)  # 50 gradients summed, then the dot product
    ig_text = create("integrated_gradients", preset="paper-001").explain(smooth, encoding, target=0)
    ig_code = create("integrated_gradients", preset="paper-001-code").explain(smooth, encoding, target=0)
    assert (by_hand < 0).any()
    np.testing.assert_allclose(ig_text.token_scores, by_hand, rtol=0, atol=tolerance)
    np.testing.assert_allclose(ig_code.token_scores, np.abs(by_hand), rtol=0, atol=tolerance)
    assert ig_text.signed and not ig_code.signed


@pytest.mark.parametrize("baseline,rule", [("pad", "gausslegendre"), ("mask", "riemann_right"),
                                           ("zero", "riemann_trapezoid")])
def test_integrated_gradients_completeness(smooth, baseline, rule):
    """Sum of IG scores = f(input) - f(baseline) (computed here by two forward passes) at enough steps."""
    encoding = smooth.encode(TEXT)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    with torch.no_grad():
        logits = torch.cat([forward(embeddings)[0], forward(baseline_embeddings(smooth, encoding, baseline))[0]])
        gap = float(logits[1] - logits[3])
    coarse = create("integrated_gradients", n_steps=4, method=rule, baseline=baseline).explain(smooth, encoding, 1)
    fine = create("integrated_gradients", n_steps=300, method=rule, baseline=baseline).explain(smooth, encoding, 1)
    assert abs(gap) > 0.05  # the check below is not vacuous
    assert fine.token_scores.sum() == pytest.approx(gap, rel=0.01)
    delta = fine.provenance["details"]["convergence_delta"]
    # the same sum of scores; only f(input) - f(baseline) is computed twice (float32 logits)
    assert delta == pytest.approx(fine.token_scores.sum() - gap, abs=float32_tolerance(logits))
    assert abs(delta) <= abs(coarse.provenance["details"]["convergence_delta"]) + 1e-6
    assert not any("Convergence delta" in w for w in fine.warnings)


def test_integrated_gradients_ends_come_from_one_batch_and_equal_captums_delta(smooth):
    """f(x), f(b) and the delta from one 2-row forward (Captum's return_convergence_delta ran two more
    batches, and the gap two more): n_steps + 2 sequences in path batches + 1 batches; the values equal Captum's."""
    from captum.attr import IntegratedGradients as CaptumIntegratedGradients

    from models.metering import metered

    encoding = smooth.encode(TEXT)
    explainer = create("integrated_gradients", n_steps=50, internal_batch_size=25)
    with metered() as meter:
        explanation = explainer.explain(smooth, encoding, 1)
    assert (meter.forward_passes, meter.backward_passes, meter.batches) == (52, 50, 3)
    assert explainer.estimate_passes(encoding) == (52, 50)  # the estimate counts what runs
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    baseline = baseline_embeddings(smooth, encoding, "pad")
    attribution, delta = CaptumIntegratedGradients(forward).attribute(
        embeddings, baselines=baseline, target=1, n_steps=50, internal_batch_size=25, return_convergence_delta=True)
    details = explanation.provenance["details"]
    with torch.no_grad():
        logits = forward(embeddings)[0]
    np.testing.assert_array_equal(explanation.token_scores, attribution[0].sum(dim=-1).numpy())  # the same call
    # the ends ran in a batch of 2, Captum's one input at a time: float32 reordering of logits
    assert details["convergence_delta"] == pytest.approx(float(delta[0]), abs=float32_tolerance(logits))
    assert details["f(input) - f(baseline)"] == pytest.approx(float(logits[1]) - float(forward(baseline)[0, 1]),
                                                           abs=float32_tolerance(logits))


def test_integrated_gradients_warns_when_baseline_scores_like_input(keyword_classifier):
    # this tiny model classifies an all-[PAD] input as positive, like the sentence: nothing to attribute
    encoding = keyword_classifier.encode("the plot had music and excellent scenes with new actors")
    forward, embeddings = embedding_function(keyword_classifier, encoding, "logit")
    with torch.no_grad():
        f_input = float(forward(embeddings)[0, 1])
        f_base = float(forward(baseline_embeddings(keyword_classifier, encoding, "pad"))[0, 1])
    explanation = create("integrated_gradients").explain(keyword_classifier, encoding, target=1)
    has_warning = any("baseline" in w and "little to attribute" in w for w in explanation.warnings)
    assert has_warning == (abs(f_input - f_base) < 0.1 * abs(f_input))


def test_smoothgrad_matches_captum_noise_tunnel_and_is_seeded(smooth):
    encoding = smooth.encode(TEXT)
    explainer = create("smoothgrad", n_samples=8, noise_level=0.2, reduction="sum", seed=5)
    explanation = explainer.explain(smooth, encoding, target=1)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    sigma = 0.2 * float(embeddings.max() - embeddings.min())
    seed_everything(5)
    gradient = NoiseTunnel(CaptumSaliency(forward)).attribute(embeddings.clone().requires_grad_(), nt_samples=8,
                                                              nt_samples_batch_size=8, stdevs=sigma, target=1,
                                                              abs=False)
    np.testing.assert_allclose(explanation.token_scores, gradient[0].sum(-1).detach().numpy(), rtol=0,
                               atol=float32_tolerance(gradient[0].abs().sum(-1).detach()))
    assert explanation.provenance["seed"] == 5
    again = create("smoothgrad", n_samples=8, noise_level=0.2, reduction="sum", seed=5).explain(smooth,
                                                                                                encoding, target=1)
    other = create("smoothgrad", n_samples=8, noise_level=0.2, reduction="sum", seed=6).explain(smooth,
                                                                                                encoding, target=1)
    np.testing.assert_array_equal(again.token_scores, explanation.token_scores)
    assert not np.allclose(other.token_scores, explanation.token_scores)
    # without noise SmoothGrad is the plain gradient
    plain = create("smoothgrad", n_samples=3, noise_level=0.0, reduction="l2").explain(smooth, encoding, 1)
    saliency = create("saliency", reduction="l2").explain(smooth, encoding, 1)
    np.testing.assert_allclose(plain.token_scores, saliency.token_scores, rtol=0,
                               atol=float32_tolerance(saliency.token_scores))


def test_gradient_shap_matches_captum_and_is_seeded(smooth):
    encoding = smooth.encode(TEXT)
    explanation = create("gradient_shap", n_samples=10, baselines="pad+zero", seed=3).explain(smooth,
                                                                                             encoding, target=0)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    baselines = torch.cat([baseline_embeddings(smooth, encoding, k) for k in ("pad", "zero")])
    seed_everything(3)
    expected = CaptumGradientShap(forward).attribute(embeddings, baselines=baselines, n_samples=10, stdevs=0.0,
                                                     target=0)
    np.testing.assert_allclose(explanation.token_scores, expected[0].sum(-1).detach().numpy(), rtol=0,
                               atol=float32_tolerance(expected[0].abs().sum(-1).detach()))
    other = create("gradient_shap", n_samples=10, baselines="pad+zero", seed=4).explain(smooth, encoding, 0)
    assert not np.allclose(other.token_scores, explanation.token_scores)


def test_gradient_shap_adds_up_in_expectation(smooth):
    """With one baseline and many samples, GradientSHAP -> IG, so the scores sum to f(x) - f(b)."""
    encoding = smooth.encode(TEXT)
    explanation = create("gradient_shap", n_samples=400, baselines="pad", seed=0).explain(smooth, encoding, 1)
    gap = explanation.provenance["details"]["f(input) - mean f(baselines)"]
    assert abs(gap) > 1e-3
    assert explanation.token_scores.sum() == pytest.approx(gap, rel=0.1)


def test_deeplift_matches_captum_and_reports_completeness(smooth):
    encoding = smooth.encode(TEXT)
    explanation = create("deeplift", baseline="pad").explain(smooth, encoding, target=1)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    baseline = baseline_embeddings(smooth, encoding, "pad")

    class Plain(torch.nn.Module):  # DeepLift on the original model, wrapped the simplest way
        def __init__(self):
            super().__init__()
            self.model = smooth.model

        def forward(self, inputs_embeds):
            return forward(inputs_embeds)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = CaptumDeepLift(Plain()).attribute(embeddings.clone().requires_grad_(), baselines=baseline, target=1)
    np.testing.assert_allclose(explanation.token_scores, expected[0].sum(-1).detach().numpy(), rtol=0,
                               atol=float32_tolerance(expected[0].abs().sum(-1).detach()))
    with torch.no_grad():
        logits = torch.cat([forward(embeddings)[0], forward(baseline)[0]])
        gap = float(forward(embeddings)[0, 1] - forward(baseline)[0, 1])
    details = explanation.provenance["details"]
    assert details["f(input) - f(baseline)"] == pytest.approx(gap, abs=float32_tolerance(logits))
    assert details["completeness_error"] == pytest.approx(explanation.token_scores.sum() - gap,
                                                          abs=float32_tolerance(logits))
    large = abs(details["completeness_error"]) > 0.05 * abs(gap)
    assert large == any("completeness error" in w for w in explanation.warnings)


def test_deeplift_hooks_live_on_a_copy_that_shares_the_weights(smooth):
    from explainers.methods.deeplift import hook_safe_copy

    copy = hook_safe_copy(smooth.model)
    originals = dict(smooth.model.named_parameters())
    assert all(p is originals[name] for name, p in copy.named_parameters())  # no weights copied
    tanh = next(m for m in copy.modules() if isinstance(m, torch.nn.Tanh))
    handle = tanh.register_forward_hook(lambda *args: None)
    try:
        assert not any(m._forward_hooks for m in smooth.model.modules())  # the shared model never sees it
    finally:
        handle.remove()


@pytest.mark.integration
def test_deeplift_warns_on_this_transformer(quick_classifier):
    encoding = quick_classifier.encode("a gorgeous , heartfelt and wickedly funny debut .")
    explanation = create("deeplift").explain(quick_classifier, encoding)
    error = explanation.provenance["details"]["completeness_error"]
    assert np.isfinite(error)
    assert (abs(error) > 0.05 * abs(explanation.provenance["details"]["f(input) - f(baseline)"])) == any(
        "completeness error" in w for w in explanation.warnings)



def test_signed_gradient_sum_on_a_layernormed_embedding_is_flagged_as_noise(random_classifier):
    """paper 003's "sum" reduction: a LayerNorm on the embeddings makes each token's input gradient sum to 0, so the
    scores are float noise; the explanation says so instead of showing a heatmap that looks meaningful."""
    encoding = random_classifier.encode("a good film with a great cast")
    summed = create("saliency", preset="paper-003").explain(random_classifier, encoding)
    assert VANISHING_SUM in summed.warnings
    assert float(np.abs(summed.token_scores).max()) < 1e-4 * float(np.abs(
        create("saliency").explain(random_classifier, encoding).token_scores).max())
    assert VANISHING_SUM not in create("saliency").explain(random_classifier, encoding).warnings
