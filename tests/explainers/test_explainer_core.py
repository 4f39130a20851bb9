"""The five foundation methods against values computed another way (autograd by hand, Captum's layer methods,
direct prediction differences, the attention tensor), plus aggregation, provenance and the content cache."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from captum.attr import LayerIntegratedGradients
from tiny_models import KEYWORD
from tolerances import float32_tolerance

from explainers import aggregate_to_words, create, normalize
from explainers.cache import ExplanationCache, explain_cached
from explainers.scores import log_odds
from models.attention_kernel import eager_attention

TEXT = "the movie was unbelievably excellent"


def _gradient(classifier, encoding, target):
    tensors = classifier.tensors(encoding)
    embeds = classifier.word_embeddings(tensors["input_ids"]).detach().clone().requires_grad_(True)
    logits = classifier.forward_embeds(embeds, tensors["attention_mask"], tensors["token_type_ids"])
    logits[0, target].backward()
    return embeds.detach()[0], embeds.grad[0]


def test_saliency_l2_sum_and_onehot_match_autograd(keyword_classifier):
    enc = keyword_classifier.encode(TEXT)
    embeds, grad = _gradient(keyword_classifier, enc, 1)
    l2 = create("saliency").explain(keyword_classifier, enc, 1)
    # float32 gradients computed twice: tolerances in ulps of each vector's size (tests/tolerances.py)
    norms = grad.norm(dim=-1).numpy()
    np.testing.assert_allclose(l2.token_scores, norms, rtol=0, atol=float32_tolerance(norms))
    signed = create("saliency", preset="paper-003").explain(keyword_classifier, enc, 1)
    sums = grad.sum(dim=-1).numpy()
    np.testing.assert_allclose(signed.token_scores, sums, rtol=0, atol=float32_tolerance(grad.abs().sum(dim=-1)))
    onehot = create("saliency", preset="paper-001").explain(keyword_classifier, enc, 1)
    matrix = keyword_classifier.model.get_input_embeddings().weight.detach()
    projected = (grad @ matrix.T).norm(dim=-1).numpy()
    np.testing.assert_allclose(onehot.token_scores, projected, rtol=0, atol=float32_tolerance(projected))
    # sub-word norms combine as a norm: word 3 = un ##believ ##ably
    assert l2.word_scores[3] == pytest.approx(np.sqrt((l2.token_scores[4:7] ** 2).sum()))
    assert not l2.signed and signed.signed


def test_input_x_gradient_matches_autograd(keyword_classifier):
    enc = keyword_classifier.encode(TEXT)
    embeds, grad = _gradient(keyword_classifier, enc, 1)
    expected = (embeds * grad).sum(dim=-1).numpy()
    signed = create("input_x_gradient").explain(keyword_classifier, enc, 1)
    size = (embeds * grad).abs().sum(dim=-1).numpy()  # the size of each dot product's terms
    np.testing.assert_allclose(signed.token_scores, expected, rtol=0, atol=float32_tolerance(size))
    absolute = create("input_x_gradient", preset="paper-001-code").explain(keyword_classifier, enc, 1)
    np.testing.assert_allclose(absolute.token_scores, np.abs(expected), rtol=0, atol=float32_tolerance(size))
    assert signed.word_scores[3] == pytest.approx(expected[4:7].sum(), abs=float32_tolerance(size[4:7].sum()))


@pytest.mark.integration
@pytest.mark.parametrize("baseline", ["pad", "mask", "zero"])
def test_integrated_gradients_completeness(quick_classifier, baseline):
    # On the real model (the tiny test model is nearly a step function along the path, where no rule converges).
    enc = quick_classifier.encode("a gorgeous , witty and moving film")
    explanation = create("integrated_gradients", n_steps=100, baseline=baseline).explain(quick_classifier, enc, 1)
    details = explanation.provenance["details"]
    gap = details["f(input) - f(baseline)"]
    with torch.no_grad():  # f(x) - f(b) computed independently of the explainer
        from explainers.embedding_forward import baseline_embeddings, embedding_function

        forward, embeds = embedding_function(quick_classifier, enc, "logit")
        direct = float(forward(embeds)[0, 1] - forward(baseline_embeddings(quick_classifier, enc, baseline))[0, 1])
    assert gap == pytest.approx(direct, abs=float32_tolerance(forward(embeds)[0]))  # a difference of logits
    assert explanation.token_scores.sum() == pytest.approx(direct, abs=0.01 * abs(direct) + 1e-3)
    assert abs(details["convergence_delta"]) < 0.01 * abs(direct) + 1e-3 and not explanation.warnings


def test_integrated_gradients_equals_captum_layer_ig_on_word_embeddings(keyword_classifier):
    enc = keyword_classifier.encode(TEXT)
    ours = create("integrated_gradients", n_steps=50, method="riemann_right", baseline="pad").explain(
        keyword_classifier, enc, 1)
    tensors = keyword_classifier.tensors(enc)

    def forward(ids):
        return keyword_classifier.model(input_ids=ids, attention_mask=tensors["attention_mask"].expand(ids.shape[0], -1),
                                        token_type_ids=tensors["token_type_ids"].expand(ids.shape[0], -1)).logits

    ids = tensors["input_ids"]
    reference = torch.where(torch.tensor([enc.special]), ids, torch.zeros_like(ids))  # [PAD] = 0, specials kept
    layer_ig = LayerIntegratedGradients(forward, keyword_classifier.model.get_input_embeddings())
    theirs = layer_ig.attribute(ids, baselines=reference, target=1, n_steps=50, method="riemann_right").sum(-1)[0]
    theirs = theirs.detach().numpy()  # 50 steps batched another way: float32 sums of 50 gradients
    np.testing.assert_allclose(ours.token_scores, theirs, rtol=0, atol=50 * float32_tolerance(theirs))


def test_integrated_gradients_warns_when_the_delta_is_large(keyword_classifier):
    explanation = create("integrated_gradients", n_steps=2, method="riemann_left").explain(
        keyword_classifier, keyword_classifier.encode(TEXT), 1)
    assert explanation.warnings and "increase the steps" in explanation.warnings[0]


@pytest.mark.parametrize("operator", ["delete", "pad", "mask", "unk", "zero"])
def test_leave_one_out_equals_direct_prediction_differences(keyword_classifier, operator):
    enc = keyword_classifier.encode(TEXT, "some music")
    words = list(enc.words)
    full = keyword_classifier.predict_logits([enc])[0]
    for score in ("probability", "log2-odds"):
        explanation = create("leave_one_out", operator=operator, score=score).explain(keyword_classifier, enc, 1)
        for i in range(len(words)):
            if operator == "delete":
                kept = [w for j, w in enumerate(words) if j != i]
                n_first = 5 - (i < 5)
                reduced = keyword_classifier.encode(" ".join(kept[:n_first]) or " x", " ".join(kept[n_first:]))
                logits = keyword_classifier.predict_logits([reduced])[0] if kept[:n_first] else \
                    keyword_classifier.predict_logits(keyword_classifier.tokenize_texts([""], [" ".join(kept[n_first:])]))[0]
            else:
                keep = np.ones((1, len(words)), dtype=bool)
                keep[0, i] = False
                from models.perturb import perturbed_logits

                logits = perturbed_logits(keyword_classifier, enc, keep, operator)[0]
            if score == "probability":
                expected = _softmax(full)[1] - _softmax(logits)[1]
            else:
                expected = math.log2(_softmax(full)[1] / _softmax(full)[0]) - math.log2(_softmax(logits)[1] / _softmax(logits)[0])
            # float32 padding noise: a probability (scale 1) or a log2-odds (two logits / ln 2)
            size = 1.0 if score == "probability" else 2 * np.abs(np.r_[full, logits]).max() / math.log(2)
            assert explanation.word_scores[i] == pytest.approx(expected, abs=float32_tolerance(size))
    assert explanation.provenance["removal_operator"] == operator
    # one forward per word; the original's score comes from the classifier's per-input prediction cache
    assert explanation.provenance["forward_passes"] == len(words)
    fresh = keyword_classifier.encode(f"{TEXT} again {operator}")
    first = create("leave_one_out", operator=operator).explain(keyword_classifier, fresh, 1)
    assert first.provenance["forward_passes"] == fresh.n_words + 1  # + the original, computed once


def test_log_odds_is_stable_for_confident_predictions():
    logits = np.array([[0.0, 40.0], [1.0, 0.0]])
    np.testing.assert_allclose(log_odds(logits, 1), [40 / math.log(2), -1 / math.log(2)])
    three = np.array([[1.0, 2.0, 0.5]])
    p = _softmax(three[0])
    assert log_odds(three, 1)[0] == pytest.approx(math.log2(p[1] / (1 - p[1])))


def test_attention_matches_the_attention_tensor(keyword_classifier):
    enc = keyword_classifier.encode(TEXT)
    with torch.no_grad(), eager_attention(keyword_classifier.model):  # models run SDPA, which gives no weights
        attentions = keyword_classifier.model(**keyword_classifier.tensors(enc), output_attentions=True).attentions
    stacked = torch.stack([a[0] for a in attentions]).mean(dim=1).numpy()  # layers x T x T, mean over heads
    last = create("attention").explain(keyword_classifier, enc, 1)
    np.testing.assert_allclose(last.token_scores, stacked[-1][0], rtol=0, atol=float32_tolerance(1.0))  # weights <= 1
    average = create("attention", preset="paper-003-average").explain(keyword_classifier, enc, 1)
    np.testing.assert_allclose(average.token_scores, stacked.mean(axis=0).mean(axis=0), rtol=0,
                               atol=float32_tolerance(1.0))
    assert last.word_scores[3] == pytest.approx(stacked[-1][0][4:7].sum(), abs=float32_tolerance(1.0))


def test_faithful_foundation_methods_rank_the_keyword_first(keyword_classifier):
    for text in ("the movie was excellent and long", "excellent music with some actors", "a film that had excellent plot"):
        enc = keyword_classifier.encode(text)
        for method in ("integrated_gradients", "leave_one_out", "saliency"):
            explanation = create(method).explain(keyword_classifier, enc, 1)
            assert explanation.top_words(1) == [KEYWORD], (method, text, explanation.word_scores)


def test_target_choice_and_provenance(keyword_classifier):
    enc = keyword_classifier.encode("some scenes and music")
    predicted = create("leave_one_out").explain(keyword_classifier, enc)
    assert predicted.target == 0 and predicted.provenance["target"]["how"] == "predicted"
    chosen = create("leave_one_out").explain(keyword_classifier, enc, 1)
    assert chosen.provenance["target"] == {"index": 1, "label": "positive", "how": "chosen"}
    p = chosen.provenance
    assert p["model"]["fingerprint"] == keyword_classifier.fingerprint and p["library_versions"]["captum"]
    assert p["params"] == {"operator": "delete", "score": "log2-odds"} and p["seconds"] > 0
    with pytest.raises(Exception, match="does not exist"):
        create("leave_one_out").explain(keyword_classifier, enc, 5)


def test_aggregation_and_normalization_by_hand():
    scores = np.array([0.0, 1.0, -3.0, 2.0, 0.5, 0.0])
    token_word = [-1, 0, 1, 1, 2, -1]
    assert list(aggregate_to_words(scores, token_word, 3, "sum")) == [1.0, -1.0, 0.5]
    assert list(aggregate_to_words(scores, token_word, 3, "mean")) == [1.0, -0.5, 0.5]
    assert list(aggregate_to_words(scores, token_word, 3, "max")) == [1.0, 2.0, 0.5]
    assert list(aggregate_to_words(scores, token_word, 3, "absmax")) == [1.0, -3.0, 0.5]
    assert list(aggregate_to_words(scores, token_word, 3, "first")) == [1.0, -3.0, 0.5]
    assert aggregate_to_words(scores, token_word, 3, "l2")[1] == pytest.approx(math.sqrt(13))
    words = np.array([2.0, -1.0, 1.0])
    np.testing.assert_allclose(normalize(words, "max-abs"), [1.0, -0.5, 0.5])
    np.testing.assert_allclose(normalize(words, "l1"), [0.5, -0.25, 0.25])
    np.testing.assert_allclose(normalize(words, "abs-sum"), [0.5, 0.25, 0.25])
    np.testing.assert_allclose(normalize(np.zeros(3), "max-abs"), 0.0)


def test_parameters_are_validated():
    with pytest.raises(ValueError, match="must be one of"):
        create("leave_one_out", operator="shuffle")
    with pytest.raises(ValueError, match="between"):
        create("integrated_gradients", n_steps=1)
    with pytest.raises(ValueError, match="Unknown preset"):
        create("saliency", preset="paper-999")
    assert create("integrated_gradients", n_steps="20").params.n_steps == 20  # strings from the CLI are coerced


def test_content_cache_hits_and_keys(keyword_classifier, tmp_path):
    cache = ExplanationCache(directory=tmp_path)
    enc = keyword_classifier.encode(TEXT)
    first = explain_cached(create("leave_one_out"), keyword_classifier, enc, 1, cache=cache)
    again = explain_cached(create("leave_one_out"), keyword_classifier, enc, 1, cache=cache)
    assert again.provenance["cache"] == "memory" and np.array_equal(first.word_scores, again.word_scores)
    cache.clear()
    from_disk = explain_cached(create("leave_one_out"), keyword_classifier, enc, 1, cache=cache)
    assert from_disk.provenance["cache"] == "disk" and np.array_equal(first.word_scores, from_disk.word_scores)
    other = explain_cached(create("leave_one_out", operator="pad"), keyword_classifier, enc, 1, cache=cache)
    assert "cache" not in other.provenance and not np.array_equal(other.word_scores, first.word_scores)
    with pytest.raises(ValueError):
        first.word_scores[0] = 1.0  # cached arrays are read-only


def _softmax(logits):
    exp = np.exp(np.asarray(logits) - np.max(logits))
    return exp / exp.sum()
