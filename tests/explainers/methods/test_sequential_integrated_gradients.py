"""Sequential Integrated Gradients (Enguehard 2023) against its formula: for each word, the Riemann sum of the
gradient along the path that moves only that word from [MASK], computed here with autograd point by point; and
completeness per word (each word's scores sum to F(x) - F(x with that word at the baseline))."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import wide_three_class

from explainers import create
from explainers.embedding_forward import baseline_embeddings, embedding_function

TEXT = "the movie was excellent and the music was long"


@pytest.fixture(scope="module")
def classifier():
    return wide_three_class()


def by_hand(classifier, encoding, target, n_steps):
    """Right Riemann sum, one word and one path point at a time (no Captum, no batching)."""
    forward, x = embedding_function(classifier, encoding, "logit")
    mask_base = baseline_embeddings(classifier, encoding, "mask")
    word_of = np.asarray(encoding.token_word)
    scores = np.zeros(encoding.n_tokens)
    for word in range(encoding.n_words):
        moving = torch.tensor(word_of == word)[None, :, None]
        start = torch.where(moving, mask_base, x)  # only this word at [MASK]
        total = torch.zeros_like(x)
        for k in range(1, n_steps + 1):
            point = (start + k / n_steps * (x - start)).requires_grad_()
            (gradient,) = torch.autograd.grad(forward(point)[0, target], point)
            total += gradient
        contribution = ((x - start) * total / n_steps)[0].sum(dim=-1).numpy()
        scores[word_of == word] = contribution[word_of == word]
    return scores


def test_sig_equals_its_formula_summed_step_by_step(classifier):
    encoding = classifier.encode(TEXT)
    explanation = create("sequential_integrated_gradients", n_steps=12, method="riemann_right").explain(
        classifier, encoding, 1)
    np.testing.assert_allclose(explanation.token_scores, by_hand(classifier, encoding, 1, 12), rtol=1e-4, atol=1e-6)


def test_sig_is_complete_per_word(classifier):
    encoding = classifier.encode(TEXT)
    explanation = create("sequential_integrated_gradients", n_steps=64).explain(classifier, encoding, 2)
    forward, x = embedding_function(classifier, encoding, "logit")
    mask_base = baseline_embeddings(classifier, encoding, "mask")
    word_of = np.asarray(encoding.token_word)
    with torch.no_grad():
        f_x = float(forward(x)[0, 2])
        for word in range(encoding.n_words):
            moved = torch.where(torch.tensor(word_of == word)[None, :, None], mask_base, x)
            gap = f_x - float(forward(moved)[0, 2])
            assert explanation.word_scores[word] == pytest.approx(gap, abs=1e-3 + 1e-3 * abs(gap))
    assert explanation.provenance["details"]["max_word_convergence_delta"] < 1e-3
    special = np.asarray(encoding.token_word) < 0
    assert np.all(explanation.token_scores[special] == 0)  # special tokens never move


def test_sig_differs_from_ig(classifier):
    """Not IG under another name: IG moves every word at once, so its scores differ."""
    encoding = classifier.encode(TEXT)
    sig = create("sequential_integrated_gradients", n_steps=16).explain(classifier, encoding, 0).word_scores
    ig = create("integrated_gradients", n_steps=16, baseline="mask").explain(classifier, encoding, 0).word_scores
    assert np.abs(sig - ig).max() > 1e-3


def test_a_tokenizer_without_mask_falls_back_to_zero_embeddings_and_says_so():
    from tiny_models import tiny_architecture

    from models import TextClassifier

    model, tokenizer = tiny_architecture("gpt2", seed=1)
    gpt2 = TextClassifier(model, tokenizer, name="tiny-gpt2", device="cpu", source="tests")
    encoding = gpt2.encode(TEXT)
    explanation = create("sequential_integrated_gradients", n_steps=32).explain(gpt2, encoding, 1)
    assert explanation.provenance["details"]["baseline"] == "zero"
    assert any("no [MASK] token" in w for w in explanation.warnings)
    gaps = np.asarray(explanation.provenance["details"]["word_gaps"])
    np.testing.assert_allclose(explanation.word_scores, gaps, atol=5e-3 * max(1.0, np.abs(gaps).max()))
