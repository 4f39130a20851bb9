"""The last encoder layer computed for [CLS] only: the same logits and gradients as the full model up to
float32 rounding, on every BERT-style family; everything else keeps the full model and says why."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from tiny_models import tiny_architecture

from explainers import create
from models import first_token, randomize
from models.batching import pad
from models.classifier import TextClassifier, TokenBatch

FAMILIES = ["bert", "roberta", "electra"]
TEXTS = ["the movie was excellent", "boring", "a long film with some scenes that had music and actors , not fun",
         "it is quite good"]
# Logits of order 1 (tiny models at initializer range 0.2) through 2 layers of width 32-64: float32 sums in another
# order (other matmul shapes, padding, the fused kernel) differ by a few ulps of the largest term; 2^-16 relative
# (128 ulps) leaves room for that while a wrong mask or a skipped layer moves logits by > 1e-2 (asserted below).
RELATIVE = 2.0 ** -16


def tolerance(reference) -> float:
    return RELATIVE * max(1.0, float(np.abs(np.asarray(reference)).max()))


def tiny(family: str, seed: int = 0) -> TextClassifier:
    model, tokenizer = tiny_architecture(family, seed=seed)
    return TextClassifier(model, tokenizer, name=f"tiny-{family}", device="cpu")


def one_by_one(classifier: TextClassifier, batch: TokenBatch) -> np.ndarray:
    """Logits computed another way: the Hugging Face model itself, one unpadded row at a time."""
    rows = []
    with torch.no_grad():
        for i, ids in enumerate(batch.input_ids):
            kwargs = {"attention_mask": torch.ones((1, len(ids)), dtype=torch.long)}
            zeros = batch.zero_masks[i] if batch.zero_masks is not None else None
            if zeros is None:
                kwargs["input_ids"] = torch.tensor([ids])
            else:
                keep = 1.0 - torch.tensor([zeros], dtype=torch.float32).unsqueeze(-1)
                kwargs["inputs_embeds"] = classifier.word_embeddings(torch.tensor([ids])) * keep
            if batch.token_type_ids is not None and classifier._uses_token_types:
                kwargs["token_type_ids"] = torch.tensor([batch.token_type_ids[i]])
            rows.append(classifier.model(**kwargs).logits[0].double().numpy())
    return np.stack(rows)


def mixed_batch(classifier: TextClassifier, zeros: bool = False) -> TokenBatch:
    """Sentence pairs and single sentences of different lengths (padding in every chunk); zero masks optional."""
    pairs = classifier.tokenize_texts(TEXTS[:2], TEXTS[2:])
    singles = classifier.tokenize_texts(TEXTS)
    ids = pairs.input_ids + singles.input_ids
    types = None
    if classifier._uses_token_types:  # segment 1 after the first separator of a pair (the tiny tokenizers give none)
        sep = classifier.tokenizer.sep_token_id
        types = [[int(k > row.index(sep)) for k in range(len(row))] for row in pairs.input_ids] + \
                [[0] * len(row) for row in singles.input_ids]
    masks = [[k % 3 == 1 for k in range(len(row))] for row in ids] if zeros else None
    return TokenBatch(input_ids=ids, token_type_ids=types, zero_masks=masks)


@pytest.mark.parametrize("family", FAMILIES)
def test_the_bert_families_take_the_first_token_path(family):
    classifier = tiny(family)
    assert classifier.first_token.enabled, classifier.first_token.note
    assert classifier.describe()["last_layer"] == first_token.ENABLED_NOTE
    assert classifier.precision_details(classifier.encode("good"))["last_layer"] == first_token.ENABLED_NOTE


@pytest.mark.parametrize("zeros", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_logits_of_padded_mixed_batches_equal_the_full_model(family, zeros):
    classifier = tiny(family)
    batch = mixed_batch(classifier, zeros=zeros)
    assert len({len(row) for row in batch.input_ids}) > 2  # padded rows of several lengths in one chunk
    if family != "roberta":  # (RoBERTa has one segment)
        assert any(1 in row for row in batch.token_type_ids)  # pairs: segment 1 is read
    expected = one_by_one(classifier, batch)
    got = classifier.predict_logits(batch)
    np.testing.assert_allclose(got, expected, rtol=0, atol=tolerance(expected))


@pytest.mark.parametrize("family", FAMILIES)
def test_the_last_layer_runs_for_the_first_token_only(family):
    """The saving is real: the last layer's feed-forward sees one position per row, the earlier layers all of them;
    and the last layer's module is never called as a whole."""
    classifier = tiny(family)
    layers = classifier.model.base_model.encoder.layer
    seen: dict[str, list[tuple[int, ...]]] = {"last": [], "first": [], "whole": []}
    handles = [layers[-1].intermediate.register_forward_hook(lambda m, a, o: seen["last"].append(tuple(a[0].shape))),
               layers[0].intermediate.register_forward_hook(lambda m, a, o: seen["first"].append(tuple(a[0].shape))),
               layers[-1].register_forward_hook(lambda m, a, o: seen["whole"].append(tuple(a[0].shape)))]
    try:
        classifier.predict_logits(classifier.tokenize_texts(TEXTS))
    finally:
        for handle in handles:
            handle.remove()
    assert seen["whole"] == []
    assert [shape[1] for shape in seen["last"]] == [1]
    assert seen["first"][0][1] == max(len(row) for row in classifier.tokenize_texts(TEXTS).input_ids)


@pytest.mark.parametrize("family", FAMILIES)
def test_a_wrong_mask_or_a_skipped_last_layer_would_be_caught(family):
    """The data above can tell: ignoring the padding mask in the last layer, or skipping that layer, moves the
    logits far beyond the tolerance."""
    classifier = tiny(family)
    batch = mixed_batch(classifier)
    expected = one_by_one(classifier, batch)
    ids = pad(batch.input_ids, classifier.tokenizer.pad_token_id)
    mask = pad([[1] * len(row) for row in batch.input_ids], 0)
    model, head = classifier.model, classifier.architecture.head
    with torch.no_grad():
        unmasked = first_token.first_token_logits(model, head, attention_mask=torch.ones_like(mask), input_ids=ids)
        skipped = copy.deepcopy(model)
        skipped.base_model.encoder.layer = skipped.base_model.encoder.layer[:-1]
        without_last = skipped(input_ids=ids, attention_mask=mask).logits
    for wrong in (unmasked, without_last):
        assert np.abs(wrong.double().numpy() - expected).max() > 1000 * tolerance(expected)


@pytest.mark.parametrize("family", FAMILIES)
def test_gradients_wrt_embeddings_equal_the_full_model(family):
    classifier = tiny(family)
    encoding = classifier.encode(TEXTS[2])
    tensors = classifier.tensors(encoding)
    embeds = classifier.word_embeddings(tensors["input_ids"]).detach().repeat(3, 1, 1)
    embeds[1:] *= torch.linspace(0.2, 0.7, 2).view(2, 1, 1)  # points on an integrated-gradients path
    types = tensors.get("token_type_ids")

    def gradient(forward):
        x = embeds.clone().requires_grad_(True)
        logits = forward(x)
        grad, = torch.autograd.grad(logits[:, 1].sum(), x)
        return logits.detach().double().numpy(), grad.double().numpy()

    fast_logits, fast_grad = gradient(lambda x: classifier.forward_embeds(x, tensors["attention_mask"], types))
    kwargs = {"token_type_ids": types.expand(3, -1)} if types is not None else {}
    full_logits, full_grad = gradient(lambda x: classifier.model(inputs_embeds=x, attention_mask=tensors[
        "attention_mask"].expand(3, -1), **kwargs).logits)
    np.testing.assert_allclose(fast_logits, full_logits, rtol=0, atol=tolerance(full_logits))
    np.testing.assert_allclose(fast_grad, full_grad, rtol=0, atol=tolerance(full_grad))
    assert np.abs(full_grad).max() > 1e-3  # a gradient worth comparing


@pytest.mark.parametrize("family", FAMILIES)
def test_under_the_eager_kernel_double_backprop_equals_the_full_model(family):
    """The adversarial attack differentiates an explanation (a gradient) again, under ``eager_attention``; CPU SDPA's
    fused kernel has no second derivative (found at the merge: the attack's CLI test failed on it). The first-token
    path then writes the attention out, and its logits, gradient and gradient of the gradient equal the full
    model's."""
    from models.attention_kernel import eager_attention

    classifier = tiny(family)
    batch = mixed_batch(classifier)
    width = max(len(row) for row in batch.input_ids)
    ids = torch.tensor([row + [classifier.tokenizer.pad_token_id] * (width - len(row)) for row in batch.input_ids])
    mask = torch.tensor([[1] * len(row) + [0] * (width - len(row)) for row in batch.input_ids])
    base = classifier.word_embeddings(ids).detach()

    def second_order(forward):
        x = base.clone().requires_grad_(True)
        logits = forward(x)
        grad, = torch.autograd.grad(logits[:, 1].sum(), x, create_graph=True)
        again, = torch.autograd.grad((grad * base).sum(), x)  # an input x gradient's sum, differentiated
        return [t.detach().double().numpy() for t in (logits, grad, again)]

    with eager_attention(classifier.model):
        fast = second_order(lambda x: classifier.forward_embeds(x, mask))
        full = second_order(lambda x: classifier.model(inputs_embeds=x, attention_mask=mask).logits)
    assert classifier.first_token.enabled
    for ours, theirs in zip(fast, full):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=tolerance(theirs))
    assert np.abs(full[2]).max() > 1e-4  # a second derivative worth comparing


def test_saliency_and_integrated_gradients_equal_the_full_last_layer(monkeypatch):
    classifier = tiny("bert")
    monkeypatch.setenv("EXWB_FULL_LAST_LAYER", "1")
    # its own copy of the weights: nothing cached per model object is shared with the first-token classifier
    full = TextClassifier(copy.deepcopy(classifier.model), classifier.tokenizer, name="tiny-bert-full", device="cpu")
    assert not full.first_token.enabled and "EXWB_FULL_LAST_LAYER=1" in full.describe()["last_layer"]
    encoding = classifier.encode(TEXTS[2], TEXTS[0])
    for method in ("saliency", "integrated_gradients"):
        fast_scores = create(method).explain(classifier, encoding).token_scores
        full_scores = create(method).explain(full, encoding).token_scores
        np.testing.assert_allclose(fast_scores, full_scores, rtol=0, atol=tolerance(full_scores))


@pytest.mark.parametrize("family", ["bert", "electra"])
def test_a_randomized_copy_reads_its_own_randomized_weights(family):
    classifier = tiny(family)
    copy_ = randomize.randomized(classifier, "block 1", init="normal")
    assert copy_.first_token.enabled
    batch = mixed_batch(classifier)
    expected = one_by_one(copy_, batch)
    np.testing.assert_allclose(copy_.predict_logits(batch), expected, rtol=0, atol=tolerance(expected))
    assert np.abs(expected - one_by_one(classifier, batch)).max() > 1000 * tolerance(expected)


@pytest.mark.parametrize("family, reason", [("distilbert", "no BERT-style encoder.layer stack"),
                                            ("mpnet", "not BERT-style layers"), ("gpt2", "reads the last token"),
                                            ("bart", "reads the eos token")])
def test_other_architectures_keep_the_full_model_and_say_why(family, reason):
    classifier = tiny(family)
    assert not classifier.first_token.enabled
    assert reason in classifier.describe()["last_layer"]
    batch = classifier.tokenize_texts(TEXTS)
    assert np.isfinite(classifier.predict_logits(batch)).all()


class MeanPooler(torch.nn.Module):
    """A head that reads the mean of every token, not [CLS]: the first-token path would be wrong for it."""

    def __init__(self, pooler):
        super().__init__()
        self.dense = pooler.dense

    def forward(self, hidden):
        return torch.tanh(self.dense(hidden.mean(dim=1)))


def test_the_self_check_turns_the_path_off_for_a_head_that_reads_every_token():
    model, tokenizer = tiny_architecture("bert")
    model.bert.pooler = MeanPooler(model.bert.pooler)
    classifier = TextClassifier(model, tokenizer, name="mean-pooled", device="cpu")
    assert not classifier.first_token.enabled
    assert "self-check" in classifier.first_token.note
    # its logits are the model's own on the padded rows (a mean over padding depends on it: no one-by-one here)
    texts = TEXTS[:3]
    ids = pad(classifier.tokenize_texts(texts).input_ids, classifier.tokenizer.pad_token_id)
    with torch.no_grad():
        expected = model(input_ids=ids, attention_mask=(ids != classifier.tokenizer.pad_token_id).long()).logits
    np.testing.assert_allclose(classifier.predict_logits(classifier.tokenize_texts(texts)), expected.double().numpy(),
                               rtol=0, atol=tolerance(expected.numpy()))


def test_fast_mode_runs_the_first_token_path_under_autocast():
    classifier = tiny("bert")
    fast = classifier.fast_variant(torch.bfloat16)
    assert fast.first_token.enabled
    batch = mixed_batch(classifier)
    expected = one_by_one(classifier, batch)
    got = fast.predict_logits(batch)
    # bfloat16 keeps 8 bits of mantissa: 2^-6 relative per op, a few ops deep
    assert np.abs(got - expected).max() < 0.1 * max(1.0, np.abs(expected).max())


@pytest.mark.integration
def test_the_quick_model_gives_the_full_models_logits_and_gradients(quick_classifier):
    classifier = quick_classifier
    assert classifier.first_token.enabled, classifier.first_token.note
    texts = ["a gripping , beautifully acted film", "dull", "it is neither as funny nor as moving as it wants to be",
             "the plot holes are big enough to drive a truck through , but the cast keeps it afloat"]
    batch = classifier.tokenize_texts(texts)
    expected = one_by_one(classifier, batch)
    # 6 layers of width 384-1536 on a trained model: 2^-14 relative to the largest logit (float32 accumulations)
    atol = 2.0 ** -14 * max(1.0, np.abs(expected).max())
    np.testing.assert_allclose(classifier.predict_logits(batch), expected, rtol=0, atol=atol)
    encoding = classifier.encode(texts[2])
    tensors = classifier.tensors(encoding)
    x = classifier.word_embeddings(tensors["input_ids"]).detach().requires_grad_(True)
    fast_grad, = torch.autograd.grad(classifier.forward_embeds(x, tensors["attention_mask"])[0, 1], x)
    full_grad, = torch.autograd.grad(classifier.model(inputs_embeds=x, attention_mask=tensors["attention_mask"])
                                     .logits[0, 1], x)
    np.testing.assert_allclose(fast_grad.numpy(), full_grad.numpy(), rtol=0,
                               atol=2.0 ** -14 * float(full_grad.abs().max()))
