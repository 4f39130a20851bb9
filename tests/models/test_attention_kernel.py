"""SDPA for every pass, eager only while attention weights are read: the same outputs within float32
rounding, attention methods still get their weights, one copy of the weights."""
from __future__ import annotations

import threading

import numpy as np
import pytest
import torch
from tiny_models import ARCHITECTURE_FAMILIES, tiny_architecture
from tolerances import float32_tolerance

from explainers import create
from models import TextClassifier, perturb
from models.attention_kernel import attention_implementation, eager_attention

TEXT = "the movie was excellent , not boring and the music was good"
# the architectures the speed work names (BERT, GPT-2, Llama-style) must run on SDPA; every other one must at least give
# the same outputs on whichever kernel it runs
SDPA_REQUIRED = ["bert", "gpt2", "llama", "causal-bert"]


def _classifier(name: str) -> TextClassifier:
    model, tokenizer = tiny_architecture(name)
    return TextClassifier(model, tokenizer, name=f"tiny-{name}", device="cpu")


def _batch(classifier: TextClassifier):
    """The input and copies of it with words deleted: rows of different lengths, padded in one batch."""
    encoding = classifier.encode(TEXT)
    keep = np.ones((5, encoding.n_words), dtype=bool)
    keep[1, 0] = keep[2, -1] = False
    keep[3, 1:6] = False
    keep[4, ::2] = False
    return encoding, perturb(classifier, encoding, keep, "delete")


@pytest.mark.parametrize("name", SDPA_REQUIRED)
def test_models_run_on_sdpa_by_default(name):
    classifier = _classifier(name)
    assert classifier.attention_implementation == "sdpa"
    assert attention_implementation(classifier.model) == "sdpa"


@pytest.mark.parametrize("name", list(ARCHITECTURE_FAMILIES))
def test_sdpa_gives_the_eager_outputs_within_float32_rounding(name):
    classifier = _classifier(name)
    encoding, batch = _batch(classifier)
    default = classifier.predict_logits(batch)
    tensors = classifier.tensors(encoding)
    embeds = classifier.word_embeddings(tensors["input_ids"]).detach().requires_grad_(True)
    logit = classifier.forward_embeds(embeds, tensors["attention_mask"], tensors.get("token_type_ids"))[0, 1]
    (gradient,) = torch.autograd.grad(logit, embeds)
    with eager_attention(classifier.model):
        assert attention_implementation(classifier.model) in ("eager", None)
        eager = classifier.predict_logits(batch)
        embeds_e = embeds.detach().clone().requires_grad_(True)
        logit_e = classifier.forward_embeds(embeds_e, tensors["attention_mask"], tensors.get("token_type_ids"))[0, 1]
        (gradient_e,) = torch.autograd.grad(logit_e, embeds_e)
    np.testing.assert_allclose(default, eager, rtol=0, atol=float32_tolerance(eager))
    np.testing.assert_allclose(gradient.numpy(), gradient_e.numpy(), rtol=0,
                               atol=float32_tolerance(gradient_e.abs().max().item()))


@pytest.mark.parametrize("name", ["bert", "gpt2", "llama", "bart"])
def test_attention_methods_still_read_weights_and_sdpa_comes_back(name):
    classifier = _classifier(name)
    encoding = classifier.encode(TEXT)
    before = classifier.attention_implementation
    weights = classifier.attentions(encoding)
    assert weights.shape[-2:] == (encoding.n_tokens, encoding.n_tokens)
    kept = classifier.tensors(encoding)["attention_mask"][0].numpy().astype(bool)
    np.testing.assert_allclose(weights[..., kept, :].sum(axis=-1), 1.0, atol=float32_tolerance(encoding.n_tokens))
    for method in ("attention", "attention_rollout"):
        explanation = create(method).explain(classifier, encoding)
        assert np.isfinite(explanation.word_scores).all() and np.abs(explanation.word_scores).sum() > 0
    assert attention_implementation(classifier.model) == before


def test_switching_the_kernel_copies_no_weights():
    classifier = _classifier("bert")
    storages = [p.untyped_storage().data_ptr() for p in classifier.model.parameters()]
    classifier.attentions(classifier.encode(TEXT))
    with eager_attention(classifier.model):
        assert [p.untyped_storage().data_ptr() for p in classifier.model.parameters()] == storages
    assert [p.untyped_storage().data_ptr() for p in classifier.model.parameters()] == storages


def test_the_model_stays_eager_until_the_last_reader_is_done():
    classifier = _classifier("bert")
    model = classifier.model
    inside, release = threading.Event(), threading.Event()

    def reader():
        with eager_attention(model):
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=reader)
    thread.start()
    inside.wait(10)
    with eager_attention(model):
        pass  # a second reader finishing first must not switch SDPA back under the first one
    assert attention_implementation(model) == "eager"
    assert classifier.attentions(classifier.encode(TEXT)).size > 0
    release.set()
    thread.join(10)
    assert attention_implementation(model) == "sdpa"


@pytest.mark.integration
def test_the_real_minilm_gives_the_same_logits_on_sdpa_and_eager(quick_classifier):
    encoding, batch = _batch(quick_classifier)
    assert quick_classifier.attention_implementation == "sdpa"
    default = quick_classifier.predict_logits(batch)
    with eager_attention(quick_classifier.model):
        eager = quick_classifier.predict_logits(batch)
    np.testing.assert_allclose(default, eager, rtol=0, atol=float32_tolerance(eager))
    assert quick_classifier.attentions(encoding).shape[:2] == (6, 12)  # MiniLM-L6: 6 layers of 12 heads
