"""Perturbation-family methods against values computed another way (direct predictions, exact Shapley values by
enumeration, a weighted least-squares fit by hand) and their seeding and batching."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from captum_reference import uniform_count_sampler
from sklearn.linear_model import Ridge
from tolerances import float32_tolerance

from explainers import create
from explainers.scores import class_score
from models.perturb import perturbed_logits

TEXT = "the movie was excellent and the music was long"
SHORT = "the music was excellent"


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def logits_of_ids(classifier, ids, types=None, zero=None):
    """Logits of one sequence of token ids, straight through the Hugging Face model (no engine)."""
    ids = torch.tensor([ids])
    kwargs = {"attention_mask": torch.ones_like(ids)}
    if types is not None:
        kwargs["token_type_ids"] = torch.tensor([types])
    with torch.no_grad():
        if zero is not None:
            keep = 1 - torch.tensor([zero], dtype=torch.float32)
            embeds = classifier.model.get_input_embeddings()(ids) * keep[..., None]
            return classifier.model(inputs_embeds=embeds, **kwargs).logits.double().numpy()
        return classifier.model(input_ids=ids, **kwargs).logits.double().numpy()


def without_word(classifier, encoding, word, operator):
    """Logits of the input with one word removed, built by hand for each operator."""
    tokenizer = classifier.tokenizer
    if operator == "delete":
        words = [w for i, w in enumerate(encoding.words) if i != word]
        enc = tokenizer(" ".join(words))
        return logits_of_ids(classifier, enc["input_ids"], enc["token_type_ids"])
    ids = list(encoding.input_ids)
    positions = [t for t, w in enumerate(encoding.token_word) if w == word]
    if operator == "zero":
        zero = [int(t in positions) for t in range(len(ids))]
        return logits_of_ids(classifier, ids, list(encoding.token_type_ids), zero=zero)
    token = {"pad": tokenizer.pad_token_id, "unk": tokenizer.unk_token_id, "mask": tokenizer.mask_token_id}[operator]
    for t in positions:
        ids[t] = token
    return logits_of_ids(classifier, ids, list(encoding.token_type_ids))


@pytest.mark.parametrize("operator", ["delete", "pad", "unk", "mask", "zero"])
@pytest.mark.parametrize("score", ["log2-odds", "probability"])
def test_leave_one_out_equals_direct_prediction_differences(smooth, operator, score):
    encoding = smooth.encode(TEXT)
    target = 1
    full = class_score(logits_of_ids(smooth, encoding.input_ids, encoding.token_type_ids), target, score)[0]
    expected = [full - class_score(without_word(smooth, encoding, i, operator), target, score)[0]
                for i in range(encoding.n_words)]
    explanation = create("leave_one_out", operator=operator, score=score).explain(smooth, encoding, target=target)
    # float32, batched: a probability has scale 1, a log2-odds two logits / ln 2
    logits = logits_of_ids(smooth, encoding.input_ids, encoding.token_type_ids)
    size = 1.0 if score == "probability" else 2 * np.abs(logits).max() / math.log(2)
    np.testing.assert_allclose(explanation.word_scores, expected, rtol=0, atol=float32_tolerance(size))
    assert np.abs(expected).max() > 1e-3
    assert explanation.provenance["removal_operator"] == operator


@pytest.mark.parametrize("score", ["log2-odds", "probability", "logit"])
def test_occlusion_window_1_with_pad_equals_leave_one_out_pad(smooth, score):
    encoding = smooth.encode(TEXT)
    occlusion = create("occlusion", window=1, operator="pad", score=score).explain(smooth, encoding, target=0)
    if score == "logit":
        full = logits_of_ids(smooth, encoding.input_ids, encoding.token_type_ids)[0, 0]
        expected = [full - without_word(smooth, encoding, i, "pad")[0, 0] for i in range(encoding.n_words)]
    else:
        expected = create("leave_one_out", operator="pad", score=score).explain(smooth, encoding, target=0).word_scores
    logits = logits_of_ids(smooth, encoding.input_ids, encoding.token_type_ids)
    size = {"probability": 1.0, "logit": np.abs(logits).max(), "log2-odds": 2 * np.abs(logits).max() / math.log(2)}
    np.testing.assert_allclose(occlusion.word_scores, expected, rtol=0, atol=float32_tolerance(size[score]))
    assert occlusion.provenance["removal_operator"] == "pad"


@pytest.mark.parametrize("window,stride", [(3, 1), (4, 3), (2, 2)])
def test_occlusion_window_averages_the_windows_covering_each_word(smooth, window, stride):
    encoding = smooth.encode(TEXT)  # 9 words
    n = encoding.n_words
    starts = list(range(0, n, stride))
    starts = starts[:next(k for k, s in enumerate(starts) if s + window >= n) + 1]  # the last one reaches the end
    keep = np.ones((len(starts) + 1, n), dtype=bool)
    for row, start in enumerate(starts, start=1):
        keep[row, start:start + window] = False
    values = class_score(perturbed_logits(smooth, encoding, keep, "mask"), 1, "probability")
    drops = values[0] - values[1:]
    expected = [np.mean([d for s, d in zip(starts, drops) if s <= i < s + window]) for i in range(n)]
    explanation = create("occlusion", window=window, stride=stride, operator="mask", score="probability").explain(
        smooth, encoding, 1)
    np.testing.assert_allclose(explanation.word_scores, expected, rtol=0, atol=float32_tolerance(1.0))  # probabilities
    assert explanation.provenance["batches"] == 1  # every window (and the unoccluded input) in one batch


def exact_shapley(classifier, encoding, target, operator, score):
    """Shapley values by enumerating every coalition (the definition)."""
    n = encoding.n_words
    subsets = list(itertools.product([False, True], repeat=n))
    values = class_score(perturbed_logits(classifier, encoding, np.array(subsets), operator), target, score) \
        if score != "logit" else perturbed_logits(classifier, encoding, np.array(subsets), operator)[:, target]
    value = dict(zip(subsets, values))
    phi = np.zeros(n)
    for subset in subsets:
        size = sum(subset)
        for i in range(n):
            if subset[i]:
                continue
            with_i = tuple(True if j == i else s for j, s in enumerate(subset))
            weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
            phi[i] += weight * (value[with_i] - value[subset])
    return phi, value[tuple([True] * n)] - value[tuple([False] * n)]


def test_shapley_sampling_is_efficient_and_close_to_exact_shapley(smooth):
    encoding = smooth.encode(SHORT)
    exact, total = exact_shapley(smooth, encoding, 1, "pad", "probability")
    explanation = create("shapley_sampling", n_samples=400, operator="pad", score="probability", seed=0).explain(
        smooth, encoding, target=1)
    # every permutation's contributions add up to f(all) - f(none), so the mean does too
    assert explanation.word_scores.sum() == pytest.approx(total, abs=float32_tolerance(1.0))  # probabilities
    assert abs(total) > 1e-2
    np.testing.assert_allclose(explanation.word_scores, exact, atol=0.1 * np.abs(exact).max())


def test_kernel_shap_is_close_to_exact_shapley(smooth):
    encoding = smooth.encode(SHORT)
    exact, total = exact_shapley(smooth, encoding, 0, "mask", "logit")
    explanation = create("kernel_shap", n_samples=3000, seed=0).explain(smooth, encoding, target=0)
    assert explanation.word_scores.sum() == pytest.approx(total, abs=1e-3 * max(1.0, abs(total)))
    np.testing.assert_allclose(explanation.word_scores, exact, atol=0.1 * np.abs(exact).max())
    assert explanation.provenance["removal_operator"] == "mask"


def test_kernel_shap_single_word_is_exact(smooth):
    encoding = smooth.encode("excellent")
    explanation = create("kernel_shap").explain(smooth, encoding, target=1)
    _, total = exact_shapley(smooth, encoding, 1, "mask", "logit")
    # f(all) - f(none) in float32 logits, batched another way: |f(none)| <= |f(all)| + |total|
    size = np.abs(logits_of_ids(smooth, encoding.input_ids, encoding.token_type_ids)).max() + abs(total)
    assert explanation.word_scores[0] == pytest.approx(total, abs=float32_tolerance(size))


def test_lime_paper_000_equals_a_weighted_ridge_fit_by_hand(smooth):
    """paper-000 preset: the original plus samples with k ~ U{1..n} words deleted, kernel sqrt(exp(-(100 d)^2 / 25^2))
    on cosine distance, Ridge(alpha=1) on the target's probability."""
    encoding = smooth.encode(TEXT)
    n, samples, seed = encoding.n_words, 300, 7
    torch.manual_seed(seed)
    generator = uniform_count_sampler(None, num_interp_features=n)
    masks = np.array([next(generator)[0].numpy() for _ in range(samples)], dtype=bool)
    kept = masks.sum(axis=1)
    distance = 1 - np.sqrt(kept / n)  # cosine distance between a 0/1 mask and the all-ones vector
    weights = np.sqrt(np.exp(-(100 * distance) ** 2 / 25 ** 2))
    texts = [" ".join(w for w, k in zip(encoding.words, row) if k) for row in masks]
    probabilities = []
    for text in texts:
        enc = smooth.tokenizer(text)
        probabilities.append(class_score(logits_of_ids(smooth, enc["input_ids"], enc["token_type_ids"]), 1,
                                         "probability")[0])
    expected = Ridge(alpha=1.0).fit(masks.astype(float), probabilities, sample_weight=weights).coef_
    explanation = create("lime", preset="paper-000", n_samples=samples, seed=seed).explain(smooth, encoding, target=1)
    # a ridge fit of float32 probabilities evaluated in another batch order
    np.testing.assert_allclose(explanation.word_scores, expected, rtol=0,
                               atol=float32_tolerance(max(1.0, np.abs(expected).max())))
    assert np.abs(expected).max() > 1e-3
    assert explanation.provenance["removal_operator"] == "delete"
    assert explanation.provenance["seed"] == seed


@pytest.mark.parametrize("method,params", [
    ("lime", {"n_samples": 100}), ("lime", {"preset": "paper-000", "n_samples": 100}),
    ("kernel_shap", {"n_samples": 60}), ("shapley_sampling", {"n_samples": 5}),
    ("random", {}), ("random", {"distribution": "normal"}),
])
def test_stochastic_methods_same_seed_same_scores_other_seed_different(smooth, method, params):
    encoding = smooth.encode(TEXT)
    preset = params.pop("preset", None)
    first = create(method, preset=preset, seed=11, **params).explain(smooth, encoding, target=1)
    again = create(method, preset=preset, seed=11, **params).explain(smooth, encoding, target=1)
    other = create(method, preset=preset, seed=12, **params).explain(smooth, encoding, target=1)
    np.testing.assert_array_equal(first.word_scores, again.word_scores)
    assert not np.array_equal(first.word_scores, other.word_scores)
    assert first.provenance["seed"] == 11 and other.provenance["seed"] == 12
    # seeding leaves the caller's random state alone
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    create(method, preset=preset, seed=11, **params).explain(smooth, encoding, target=1)
    assert torch.equal(torch.rand(1), expected_next)


def test_random_permutation_is_a_ranking():
    from smooth_models import smooth_classifier

    classifier = smooth_classifier()
    explanation = create("random").explain(classifier, classifier.encode(TEXT))
    assert sorted(explanation.word_scores) == list(range(1, len(explanation.words) + 1))
    assert explanation.family == "baseline"


@pytest.mark.parametrize("method,params", [("lime", {}), ("kernel_shap", {}), ("shapley_sampling", {}),
                                           ("occlusion", {}), ("leave_one_out", {})])
def test_perturbations_go_through_the_engine_in_one_batch(smooth, method, params, monkeypatch):
    # a token budget every perturbed copy fits in (the CPU default, 2 048 padded tokens, splits LIME's samples)
    monkeypatch.setattr(smooth, "max_batch_tokens", 8_192)
    encoding = smooth.encode(f"{TEXT} {method}")  # an input not classified before (the original's logits are cached)
    explanation = create(method, **params).explain(smooth, encoding)
    p = explanation.provenance
    # one batch for the predicted class, one for every perturbed copy (it fits max_batch_tokens here)
    assert p["batches"] == 2
    distinct = p["details"].get("distinct_perturbations_evaluated", encoding.n_words)  # LOO: one row per word
    assert p["forward_passes"] == distinct + 1 > encoding.n_words // 2
    assert p["removal_operator"] in ("delete", "mask", "pad", "unk", "zero")


def test_sentence_pair_scores_cover_both_segments(smooth):
    text, pair = "a man is playing music", "the man is sleeping"
    encoding = smooth.encode(text, pair)
    assert encoding.segment_boundary == 5
    explanation = create("leave_one_out", operator="delete", score="probability").explain(smooth, encoding, target=1)
    full = smooth.predict_proba([encoding])[0, 1]
    hypothesis = pair.split()
    expected_last = full - smooth.predict_proba([smooth.encode(text, " ".join(hypothesis[:-1]))])[0, 1]
    assert explanation.word_scores[-1] == pytest.approx(expected_last, abs=float32_tolerance(1.0))  # probabilities
    assert list(explanation.word_segment) == [0] * 5 + [1] * 4
    for method in ("lime", "kernel_shap", "shapley_sampling", "occlusion"):
        scores = create(method).explain(smooth, encoding, target=1).word_scores
        assert scores.shape == (9,) and np.all(np.isfinite(scores))
        assert np.abs(scores[5:]).sum() > 0  # the hypothesis is explained, not held fixed
