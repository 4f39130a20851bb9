"""The document training path against values computed another way: windows as the reader reads them, the
gradient of the document loss by hand from windows run one by one, and a short fit on a separable task."""
import copy
import random

import numpy as np
import pytest
import torch
from tiny_models import FILLER, KEYWORD, tiny_bert, tiny_tokenizer

from models import TextClassifier
from models.document_training import document_loss, document_windows, predict_documents, train_on_documents
from models.training import TrainConfig
from models.windows import DocumentEncoding, WindowConfig, encode_document

WINDOW = 64  # the tiny model's maximum


def keyword_documents(n: int, seed: int = 0, words: tuple[int, int] = (90, 160)) -> tuple[list[str], list[int]]:
    """Filler documents longer than the window; label 1 iff the keyword is planted (at a random position)."""
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        text = [rng.choice(FILLER) for _ in range(rng.randint(*words))]
        if i % 2:
            text.insert(rng.randint(0, len(text)), KEYWORD)
        texts.append(" ".join(text))
        labels.append(i % 2)
    return texts, labels


def test_windows_are_the_readers_windows():
    tokenizer = tiny_tokenizer()
    classifier = TextClassifier(tiny_bert(), tokenizer, name="tiny", device="cpu", source="tests")
    for text in keyword_documents(6)[0] + ["a short text"]:
        rows = document_windows(tokenizer, text, classifier.max_length)
        read = encode_document(classifier, text)
        expected = [w.encoding for w in read.windows] if isinstance(read, DocumentEncoding) else [read]
        assert rows.input_ids == [list(e.input_ids) for e in expected]
        assert rows.token_type_ids == [list(e.token_type_ids) for e in expected]


@pytest.mark.parametrize("how", ["mean", "max", "first"])
def test_gradient_equals_windows_run_one_by_one(how):
    tokenizer = tiny_tokenizer()
    model = tiny_bert(seed=1).double().train()  # no dropout in the tiny model: train mode is deterministic
    texts, labels = keyword_documents(3, seed=2)
    documents = [document_windows(tokenizer, text, WINDOW) for text in texts]
    assert all(len(d) >= 2 for d in documents)
    loss = document_loss(model, documents, labels, how, tokenizer.pad_token_id, WINDOW, torch.device("cpu"))
    batched = torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)

    # by hand: each window's own text through the tokenizer and the model, one at a time; the rule and the
    # cross-entropy written out
    classifier = TextClassifier(tiny_bert(), tokenizer, name="tiny", device="cpu", source="tests")
    total = 0.0
    for text, label in zip(texts, labels):
        read = encode_document(classifier, text)
        words = text.split()
        rows = [model(**tokenizer(" ".join(words[w.words.start:w.words.stop]), return_tensors="pt")).logits[0]
                for w in read.windows]
        stacked = torch.stack(rows)
        doc = {"mean": sum(rows) / len(rows), "max": torch.stack([stacked[:, c].max() for c in range(2)]),
               "first": rows[0]}[how]
        total = total + (torch.logsumexp(doc, 0) - doc[label])
    by_hand = torch.autograd.grad(total / len(texts), list(model.parameters()), allow_unused=True)
    compared = 0
    for a, b in zip(batched, by_hand):
        if a is None or b is None:
            assert a is None and b is None or float((a if a is not None else b).abs().max()) == 0.0
            continue
        torch.testing.assert_close(a, b, atol=1e-9, rtol=1e-7)
        compared += 1
    assert compared > 10
    assert loss.item() == pytest.approx((total / len(texts)).item(), abs=1e-10)


@pytest.mark.training
def test_short_fit_learns_a_keyword_anywhere_in_a_document(keyword_classifier):
    # as the document twin starts from the short twin: the keyword model trained on short sentences, fine-tuned on
    # documents of 2-4 windows with the loss on the document's prediction (mean rule)
    tokenizer = keyword_classifier.tokenizer
    model = copy.deepcopy(keyword_classifier.model)
    held_texts, held_labels = keyword_documents(100, seed=1)
    held = [document_windows(tokenizer, text, WINDOW) for text in held_texts]
    before = predict_documents(model, held, "mean", tokenizer.pad_token_id, WINDOW, device=torch.device("cpu"))
    assert (before.argmax(1) == np.array(held_labels)).mean() < 0.8  # short training does not carry over
    texts, labels = keyword_documents(200, seed=0)
    documents = [document_windows(tokenizer, text, WINDOW) for text in texts]
    record = train_on_documents(model, documents, labels, TrainConfig(epochs=8, lr=2e-3, batch_size=16, warmup=0.05,
                                                                      weight_decay=0.0, max_length=WINDOW),
                                tokenizer.pad_token_id, how="mean", device=torch.device("cpu"))
    assert record["windows"] > 2 * record["documents"] and not record["stopped"]
    after = predict_documents(model, held, "mean", tokenizer.pad_token_id, WINDOW, device=torch.device("cpu"))
    assert (after.argmax(1) == np.array(held_labels)).mean() >= 0.95
    # the trained model read by the document classifier (models/windows.py) predicts the same logits
    classifier = TextClassifier(model, tokenizer, name="tiny-doc", device="cpu", source="tests")
    read = [classifier.logits_of(encode_document(classifier, t, config=WindowConfig(aggregate="mean")))
            for t in held_texts[:8]]
    np.testing.assert_allclose(np.stack(read), after[:8], atol=1e-4)
