"""The offline zoo: the causal classifier (mask, last-token read-out, loading from a folder, explaining,
randomizing) and the size axis (MiniLM cut to its first blocks)."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import VOCAB, tiny_tokenizer

from explainers import create
from models import load_classifier
from models.causal_bert import CausalBertConfig, CausalBertForSequenceClassification, last_kept_positions
from models.prepare import RECIPES, ZOO, base_classifier
from models.randomize import randomized, stage_names


def tiny_causal(seed: int = 0) -> CausalBertForSequenceClassification:
    torch.manual_seed(seed)
    config = CausalBertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                              intermediate_size=64, max_position_embeddings=64, num_labels=2,
                              attn_implementation="eager", hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = CausalBertForSequenceClassification(config).eval()
    with torch.no_grad():  # weights large enough that outputs depend clearly on the input
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.mul_(10.0)
    return model


def test_last_kept_position_for_right_and_left_padding():
    mask = torch.tensor([[1, 1, 1, 0, 0], [0, 0, 1, 1, 1], [1, 1, 1, 1, 1]])
    assert last_kept_positions(mask).tolist() == [2, 4, 4]


def test_causal_attention_and_last_token_read_out_match_a_direct_computation():
    model, tokenizer = tiny_causal(), tiny_tokenizer()
    batch = tokenizer(["a good film", "a good film with a bad end"], padding=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits
        # direct: run the encoder one sentence at a time (no padding), take its last token, pooler, classifier
        for row, text in enumerate(["a good film", "a good film with a bad end"]):
            single = tokenizer([text], return_tensors="pt")
            hidden = model.bert(**single).last_hidden_state[0, -1]
            expected = model.classifier(torch.tanh(model.bert.pooler.dense(hidden)))
            np.testing.assert_allclose(logits[row].numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
        # causal: what follows a token never changes its hidden state
        short = model.bert(**tokenizer(["a good film"], return_tensors="pt")).last_hidden_state[0, :4]
        longer = model.bert(**tokenizer(["a good film bad"], return_tensors="pt")).last_hidden_state[0, :4]
    np.testing.assert_allclose(short.numpy(), longer.numpy(), atol=1e-5)


def test_a_saved_causal_classifier_loads_explains_and_randomizes(tmp_path):
    folder = tmp_path / "causal"
    tiny_causal().save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    classifier = load_classifier(str(folder))
    assert classifier.architecture is not None and classifier.architecture.summary_token == "last"
    encoding = classifier.encode("a good film with a bad end")
    for method in ("saliency", "leave_one_out", "attention_rollout"):
        explanation = create(method).explain(classifier, encoding)
        assert explanation.word_scores.shape == (encoding.n_words,) and np.isfinite(explanation.word_scores).all()
    # leave-one-out (probability score) is the drop in the predicted class's probability when the word is deleted
    loo = create("leave_one_out", score="probability").explain(classifier, encoding)
    target = int(np.argmax(classifier.predict_proba([encoding])[0]))
    words = encoding.words
    full = classifier.predict_proba([encoding])[0, target]
    dropped = classifier.predict_proba([classifier.encode(" ".join(words[1:]))])[0, target]
    assert loo.word_scores[0] == pytest.approx(full - dropped, abs=1e-4)
    names = stage_names(classifier)
    assert len(names) >= 4  # head, two blocks, embeddings
    copy = randomized(classifier, names[1])
    assert copy.fingerprint != classifier.fingerprint
    assert not np.allclose(copy.predict_proba([encoding]), classifier.predict_proba([encoding]))


def test_size_axis_keeps_the_first_blocks_of_the_pretrained_model():
    full = base_classifier(["negative", "positive"])
    cut = base_classifier(["negative", "positive"], blocks=2)
    assert len(cut.bert.encoder.layer) == 2 and cut.config.num_hidden_layers == 2
    for kept, original in zip(cut.bert.encoder.layer, full.bert.encoder.layer[:2]):
        for a, b in zip(kept.parameters(), original.parameters()):
            assert torch.equal(a, b)
    causal = base_classifier(["negative", "positive"], causal=True)
    assert causal.config.is_decoder and torch.equal(causal.bert.embeddings.word_embeddings.weight,
                                                    full.bert.embeddings.word_embeddings.weight)


def test_zoo_recipes_and_the_defaults_keys_are_unchanged():
    assert [RECIPES[name].blocks for name in ZOO] == [None, 4, 2, None] and RECIPES["minilm-causal"].causal
    # the zoo fields at their defaults leave the built-in models' cache keys as they were (no forced rebuild)
    assert RECIPES["default-quick"].key == "d462293864"
