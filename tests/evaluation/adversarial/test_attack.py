"""The attack on explanations (paper 003 sections 2.3, 3.5): measures by hand, attributions against Captum, the double
back-propagation against finite differences, and the attack's guarantees (||delta||_inf, class, specials untouched)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from captum.attr import InputXGradient, IntegratedGradients, Saliency
from smooth_models import smooth_classifier
from tolerances import EPS32

from evaluation.adversarial import measures
from evaluation.adversarial.attack import attack
from evaluation.adversarial.attribution import differentiable_attribution
from evaluation.adversarial.config import config_for, passes
from evaluation.adversarial.result import AttackError
from explainers import ParamError
from explainers.embedding_forward import baseline_embeddings, embedding_function
from models.attention_kernel import eager_attention

TEXT = "the movie was great and the actors were fine but the plot was slow"


@pytest.fixture(scope="module")
def smooth():
    return smooth_classifier()


# ----- the measures, by hand ---------------------------------------------------------------------------------
def test_rank_change_is_position_wise_as_the_thesis_example():
    # notes 003 section 3.6: [12, 3, 7] vs [3, 15, 7] -> 0.66 (3 counts as changed although it stays in the set)
    assert measures.rank_change(np.array([12, 3, 7]), np.array([3, 15, 7])) == pytest.approx(2 / 3)
    assert measures.rank_change(np.array([1, 2]), np.array([1, 2])) == 0.0


def test_top_k_sum_change_and_shares_by_hand():
    original = measures.importance_shares(np.array([-4.0, 3.0, 2.0, 1.0]))      # 0.4, 0.3, 0.2, 0.1
    attacked = measures.importance_shares(np.array([1.0, 1.0, 6.0, -2.0]))      # 0.1, 0.1, 0.6, 0.2
    np.testing.assert_allclose(original, [0.4, 0.3, 0.2, 0.1])
    # clean top-2 = positions 0 and 1: (0.4 - 0.1) + (0.3 - 0.1) = 0.5
    assert measures.top_k_sum_change(original, attacked, 2) == pytest.approx(0.5)
    assert list(measures.top_k(attacked, 2)) == [2, 3]
    assert measures.probability_change(0.9, 0.7) == pytest.approx(0.2)


# ----- the differentiable attributions against Captum --------------------------------------------------------
@pytest.mark.parametrize("method", ["saliency", "saliency-sum", "input_x_gradient", "integrated_gradients"])
def test_differentiable_attribution_equals_captum(smooth, method):
    encoding = smooth.encode(TEXT)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    baseline = baseline_embeddings(smooth, encoding, "pad")
    reduction = "sum" if method == "saliency-sum" else "l2"
    ours, _, _ = differentiable_attribution(forward, embeddings.clone().requires_grad_(True), baseline, 1,
                                            method.removesuffix("-sum"), 16, False, reduction)
    inputs = embeddings.clone().requires_grad_(True)
    if method == "saliency":
        theirs = Saliency(forward).attribute(inputs, target=1, abs=False).norm(dim=-1, keepdim=True)
    elif method == "saliency-sum":
        theirs = Saliency(forward).attribute(inputs, target=1, abs=False)
    elif method == "input_x_gradient":
        theirs = InputXGradient(forward).attribute(inputs, target=1)
    else:
        theirs = IntegratedGradients(forward).attribute(inputs, baselines=baseline, target=1, n_steps=16,
                                                        method="riemann_right")
    theirs = theirs.sum(dim=-1)[0].detach()
    scale = float(theirs.abs().max()) if method != "saliency-sum" else 1.0
    tolerance = 64 * EPS32 * scale * embeddings.shape[-1]
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=tolerance)


@pytest.mark.parametrize("method", ["saliency", "input_x_gradient"])
def test_the_explanation_term_reaches_delta_by_double_backprop(method):
    """The top-k share's gradient w.r.t. delta equals central finite differences (float64 model): the explanation
    really is differentiated; with detached gradients (the thesis code) plain gradients have no path to delta."""
    classifier = smooth_classifier()
    classifier.model.double()
    encoding = classifier.encode("a fine and moving film")
    forward, embeddings = embedding_function(classifier, encoding, "logit")
    positions = [i for i, special in enumerate(encoding.special) if not special]

    def top_share(delta, create_graph=True):
        scores, _, _ = differentiable_attribution(forward, embeddings + delta, None, 0, method, 2, create_graph)
        magnitude = scores[positions].abs()
        return (magnitude / magnitude.sum())[:2].sum()

    delta = torch.zeros_like(embeddings, requires_grad=True)
    with eager_attention(classifier.model):  # as attack() does: SDPA's CPU backward cannot be differentiated
        analytic = torch.autograd.grad(top_share(delta), delta)[0]
    rng = np.random.default_rng(0)
    for _ in range(6):
        t, h = positions[rng.integers(len(positions))], int(rng.integers(embeddings.shape[-1]))
        step = torch.zeros_like(embeddings)
        step[0, t, h] = 1e-5
        numeric = (top_share(step.requires_grad_(True)) - top_share((-step).requires_grad_(True))).item() / 2e-5
        assert analytic[0, t, h].item() == pytest.approx(numeric, rel=1e-4, abs=1e-9)
    if method == "saliency":
        detached = top_share(torch.zeros_like(embeddings, requires_grad=True), create_graph=False)
        assert not detached.requires_grad


# ----- the attack's guarantees -------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["saliency", "input_x_gradient", "integrated_gradients"])
def test_attack_keeps_delta_in_the_ball_the_class_and_the_special_tokens(smooth, method):
    encoding = smooth.encode(TEXT)
    config = config_for("paper-003", steps=25, epsilon=0.05, ig_steps=8)
    result = attack(smooth, encoding, method, config)
    assert result.delta_linf <= 0.05 + 1e-7
    assert result.class_kept and result.attacked_class == result.original_class
    assert result.k == int(0.15 * len(result.positions)) == 2
    assert all(not encoding.special[p] for p in result.positions)
    # the attacked scores are the method's own attribution at x + delta (computed again, by Captum)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    perturbed = embeddings.clone()
    perturbed[0, result.positions] += torch.as_tensor(result.delta, dtype=perturbed.dtype)
    inputs = perturbed.requires_grad_(True)
    target = result.original_class
    if method == "saliency":
        again = Saliency(forward).attribute(inputs, target=target, abs=False).norm(dim=-1, keepdim=True)
    elif method == "input_x_gradient":
        again = InputXGradient(forward).attribute(inputs, target=target)
    else:
        again = IntegratedGradients(forward).attribute(inputs, baselines=baseline_embeddings(smooth, encoding, "pad"),
                                                       target=target, n_steps=8, method="riemann_right")
    again = again.sum(dim=-1)[0, result.positions].detach().numpy()
    np.testing.assert_allclose(result.attacked_scores, again, atol=1e-4 * max(1.0, np.abs(again).max()))
    # the measures follow from the stored shares
    assert result.rank_change == measures.rank_change(measures.top_k(result.original_shares, 2),
                                                      measures.top_k(result.attacked_shares, 2))
    assert 0.0 <= result.rank_change <= 1.0 and -1.0 <= result.top_k_sum_change <= 1.0


def test_a_coarser_ig_in_the_loop_is_read_with_the_full_ig(smooth):
    """loop_ig_steps: the loop differentiates a 3-point IG, the returned iterate is explained with the full 12-point
    IG (Captum, computed again here), and the pass count follows the loop's points."""
    encoding = smooth.encode(TEXT)
    config = config_for("paper-003", steps=15, epsilon=0.05, ig_steps=12, loop_ig_steps=3)
    result = attack(smooth, encoding, "integrated_gradients", config)
    assert result.delta_linf <= 0.05 + 1e-7 and result.class_kept
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    perturbed = embeddings.clone()
    perturbed[0, result.positions] += torch.as_tensor(result.delta, dtype=perturbed.dtype)
    full = IntegratedGradients(forward).attribute(perturbed.requires_grad_(True), target=result.original_class,
                                                  baselines=baseline_embeddings(smooth, encoding, "pad"), n_steps=12,
                                                  method="riemann_right").sum(dim=-1)[0, result.positions]
    full = full.detach().numpy()
    np.testing.assert_allclose(result.attacked_scores, full, atol=1e-4 * max(1.0, np.abs(full).max()))
    assert passes("integrated_gradients", config) == (15 * 3, 15 * 3 * 2)
    assert passes("integrated_gradients", config_for("paper-003", steps=15, ig_steps=12)) == (15 * 12, 15 * 12 * 2)
    assert passes("saliency", config) == (15, 30)


def test_the_attack_moves_the_explanation_and_repeats_exactly(smooth):
    encoding = smooth.encode(TEXT)
    config = config_for("paper-003", steps=40)
    first = attack(smooth, encoding, "input_x_gradient", config)
    assert first.top_k_sum_change > 0.05  # importance left the clean top-k
    again = attack(smooth, encoding, "input_x_gradient", config)
    np.testing.assert_array_equal(first.attacked_scores, again.attacked_scores)


def test_constrained_attack_keeps_the_probability_close(smooth):
    encoding = smooth.encode(TEXT)
    unconstrained = attack(smooth, encoding, "saliency", config_for("paper-003", steps=40))
    constrained = attack(smooth, encoding, "saliency",
                         config_for("paper-003", steps=40, objective="constrained", beta=100.0))
    assert abs(constrained.probability_change) <= abs(unconstrained.probability_change) + 1e-3


def test_stop_keeps_the_best_iterate_so_far(smooth):
    calls = []
    result = attack(smooth, smooth.encode(TEXT), "saliency", config_for("paper-003", steps=100),
                    should_stop=lambda: len(calls) >= 5, progress=lambda step, total, value: calls.append(step))
    assert result.stop_reason == "stopped by the user" and result.steps_taken == 5


def test_signed_gradient_sum_vanishes_under_an_embedding_layernorm(smooth):
    """Why Gradients default to the L2 norm: with a LayerNorm on the embeddings (BERT, RoBERTa, MiniLM) the input
    gradient sums to 0 over the hidden units, so the thesis code's signed sum is float noise."""
    encoding = smooth.encode(TEXT)
    forward, embeddings = embedding_function(smooth, encoding, "logit")
    summed, _, _ = differentiable_attribution(forward, embeddings.clone().requires_grad_(True), None, 0, "saliency",
                                              2, False, "sum")
    norm, _, _ = differentiable_attribution(forward, embeddings.clone().requires_grad_(True), None, 0, "saliency",
                                            2, False, "l2")
    assert float(summed.abs().max()) < 1e-4 * float(norm.abs().max())


def test_bad_inputs_get_clear_messages(smooth):
    with pytest.raises(AttackError, match="rounds to 0"):
        attack(smooth, smooth.encode("fine film"), "saliency")
    with pytest.raises(AttackError, match="differentiable"):
        attack(smooth, smooth.encode(TEXT), "lime")
    with pytest.raises(ParamError, match="preset"):
        config_for("paper-999")
    with pytest.raises(ParamError):
        config_for(None, epsilon=-1.0)
