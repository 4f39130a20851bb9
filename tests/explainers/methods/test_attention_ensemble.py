"""Attention rollout, ensembles and the keyword test: values by hand, and every faithful method finds the keyword."""
from __future__ import annotations

import numpy as np
import pytest
from tolerances import float32_tolerance, sum_tolerance

from explainers import REGISTRY, ParamError, create, normalize
from explainers.methods.attention import head_mean_attention
from explainers.methods.attention_rollout import rollout
from explainers.methods.ensemble import all_members, parse_members

KEYWORD_SENTENCES = ["the movie was excellent and the music was long", "excellent acting",
                     "some scenes with actors were rather short but excellent", "it is a very old story excellent",
                     "the plot had music and excellent scenes with new actors"]


@pytest.fixture()
def memory_cache(monkeypatch):
    """Ensembles compute their members through the default cache: keep it in memory and empty for the test."""
    from explainers import cache

    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    cache.DEFAULT_CACHE.clear()
    yield cache.DEFAULT_CACHE
    cache.DEFAULT_CACHE.clear()


def random_stochastic(rng, layers, size):
    matrices = rng.random((layers, size, size))
    return matrices / matrices.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("residual", [False, True])
def test_rollout_rows_sum_to_one_and_equal_the_product_by_hand(residual):
    rng = np.random.default_rng(0)
    attention = random_stochastic(rng, 3, 5)
    result = rollout(attention, residual=residual)
    np.testing.assert_allclose(result.sum(axis=1), np.ones(5), atol=1e-12)
    steps = [0.5 * a + 0.5 * np.eye(5) if residual else a for a in attention]
    by_hand = np.zeros((5, 5))
    for i in range(5):  # R = A2 A1 A0 written as explicit sums
        for j in range(5):
            by_hand[i, j] = sum(steps[2][i, k] * steps[1][k, m] * steps[0][m, j] for k in range(5) for m in range(5))
    np.testing.assert_allclose(result, by_hand, atol=1e-12)


def test_rollout_explainer_reads_the_model_attention(keyword_classifier):
    encoding = keyword_classifier.encode(KEYWORD_SENTENCES[0])
    attention = head_mean_attention(keyword_classifier, encoding)
    plain = create("attention_rollout", preset="paper-003").explain(keyword_classifier, encoding)
    # float32 attention weights (<= 1) read twice, multiplied over n tokens
    tolerance = float32_tolerance(1.0) + sum_tolerance(encoding.n_tokens)
    np.testing.assert_allclose(plain.token_scores, (attention[1] @ attention[0]).mean(axis=0), rtol=0, atol=tolerance)
    residual = create("attention_rollout", preset="abnar-zuidema").explain(keyword_classifier, encoding)
    identity = np.eye(encoding.n_tokens)
    expected = ((0.5 * attention[1] + 0.5 * identity) @ (0.5 * attention[0] + 0.5 * identity))[0]
    np.testing.assert_allclose(residual.token_scores, expected, rtol=0, atol=tolerance)
    assert plain.provenance["details"]["max_row_sum_error"] < tolerance  # float32 attention weights
    assert not plain.signed


def test_ensemble_is_the_mean_of_normalized_members_and_sums_to_one(smooth_model, memory_cache):
    encoding = smooth_model.encode(KEYWORD_SENTENCES[2])
    members = ["lime", "kernel_shap", "integrated_gradients"]
    ensemble = create("ensemble").explain(smooth_model, encoding, target=1)
    member_scores = [create(m).explain(smooth_model, encoding, target=1).word_scores for m in members]
    by_hand = np.mean([np.abs(s) / np.abs(s).sum() for s in member_scores], axis=0)
    np.testing.assert_allclose(ensemble.word_scores, by_hand, atol=1e-9)
    assert ensemble.word_scores.sum() == pytest.approx(1.0)
    assert [m["method"] for m in ensemble.provenance["details"]["members"]] == members
    assert np.all(ensemble.word_scores >= 0) and not ensemble.signed


def test_ensemble_all_uses_every_gradient_perturbation_attention_method(smooth_model, memory_cache):
    encoding = smooth_model.encode("the music was excellent")
    explanation = create("ensemble_all").explain(smooth_model, encoding)
    used = [m["method"] for m in explanation.provenance["details"]["members"]]
    expected = [m for m, cls in REGISTRY.items() if cls.family in ("gradient", "perturbation", "attention")
                and not cls.needs_mlm and not cls.trains and not cls.expensive]  # SIG waits for a click
    assert used == expected and "random" not in used and "ensemble" not in used
    assert explanation.word_scores.sum() == pytest.approx(1.0)
    assert np.allclose(normalize(explanation.word_scores, "abs-sum"), explanation.word_scores)
    paper = create("ensemble_all", preset="paper-003-all")
    assert [m for m, _ in paper.members] == ["saliency", "input_x_gradient", "integrated_gradients", "lime",
                                             "kernel_shap", "attention", "attention_rollout"]


def test_ensemble_members_are_validated():
    with pytest.raises(ParamError, match="Unknown ensemble member"):
        create("ensemble", members="lime,not_a_method")
    with pytest.raises(ParamError, match="another ensemble"):
        create("ensemble", members="ensemble_all")
    with pytest.raises(ParamError, match="Unknown preset"):
        create("ensemble", members="lime:paper-999")
    assert parse_members("lime:paper-000, saliency") == [("lime", "paper-000"), ("saliency", None)]
    assert set(all_members()) >= {"lime", "kernel_shap", "integrated_gradients", "attention_rollout"}


@pytest.fixture(scope="module")
def smooth_model():
    from smooth_models import smooth_classifier

    return smooth_classifier()


FAITHFUL = [
    ("leave_one_out", {"operator": "delete"}), ("leave_one_out", {"operator": "pad"}),
    ("leave_one_out", {"operator": "unk"}), ("leave_one_out", {"operator": "mask"}),
    ("leave_one_out", {"operator": "zero"}), ("occlusion", {"window": 1}), ("occlusion", {}),
    ("shapley_sampling", {}), ("kernel_shap", {}), ("lime", {}), ("lime", {"preset": "paper-000"}),
    ("integrated_gradients", {"baseline": "mask"}), ("integrated_gradients", {}),
    ("gradient_shap", {"n_samples": 200}),  # 20 samples are too noisy for this step-like model
    ("ensemble", {}),
]


@pytest.mark.parametrize("method,params", FAITHFUL, ids=lambda v: str(v))
def test_every_faithful_method_ranks_the_keyword_first(keyword_classifier, memory_cache, method, params):
    """The tiny model says 'positive' iff 'excellent' appears; a faithful method must rank it first.

    Baseline-relative gradient methods (IG, GradientSHAP) only see the difference to their baseline: where the
    model scores the baseline like the input there is nothing to attribute, and the method must say so."""
    params = dict(params)
    preset = params.pop("preset", None)
    for sentence in KEYWORD_SENTENCES:
        encoding = keyword_classifier.encode(sentence)
        explanation = create(method, preset=preset, **params).explain(keyword_classifier, encoding, target=1)
        first = explanation.words[explanation.ranking()[0]]
        if first != "excellent":
            assert method in ("integrated_gradients", "gradient_shap"), (sentence, first, explanation.word_scores)
            assert any("little to attribute" in w for w in explanation.warnings), (sentence, explanation.warnings)
