"""Tiny classifiers built in code for unit tests: a word-level vocabulary, a 2-layer BERT, seconds of training.

``keyword_classifier`` learns a task whose label is decided by one keyword: positive if and only if
"excellent" appears among neutral filler words. For the positive class a faithful explanation must rank
that keyword first.
"""
from __future__ import annotations

import random

import torch
from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

from models import TextClassifier
from models.classifier import TokenBatch
from models.training import TrainConfig, train_classifier

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
FILLER = ("the movie was a film that this story had some scenes with actors and music plot it is very quite "
          "rather long short old new").split()
KEYWORD = "excellent"
EXTRA = ["awful", "good", "bad", "great", "boring", "fun", "dull", "not", ",", ".", "!", "un", "##believ", "##ably"]
VOCAB = SPECIAL + sorted(set(FILLER)) + [KEYWORD] + EXTRA


def tiny_tokenizer() -> BertTokenizer:
    # transformers 5: pass vocab= (a dict); vocab_file= is silently ignored (stack-probe.md section 3)
    return BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)}, do_lower_case=True)


def tiny_bert(num_labels: int = 2, seed: int = 0, layers: int = 2, hidden: int = 32) -> BertForSequenceClassification:
    torch.manual_seed(seed)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=2,
                        intermediate_size=2 * hidden, max_position_embeddings=64, num_labels=num_labels,
                        type_vocab_size=2, attn_implementation="eager", hidden_dropout_prob=0.0,
                        attention_probs_dropout_prob=0.0)
    return BertForSequenceClassification(config).eval()


def keyword_sentences(n: int, seed: int = 0) -> tuple[list[str], list[int]]:
    rng = random.Random(seed)
    texts, labels = [], []
    for i in range(n):
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 8))]
        if i % 2:
            words.insert(rng.randint(0, len(words)), KEYWORD)
        texts.append(" ".join(words))
        labels.append(i % 2)
    return texts, labels


def train_on(model, tokenizer, texts: list[str], labels: list[int], steps: int = 80, lr: float = 3e-3,
             seed: int = 0) -> None:
    enc = tokenizer(texts, truncation=True, max_length=64)
    data = TokenBatch(input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"])
    batch = 32
    epochs = steps * batch / len(texts)
    train_classifier(model, data, labels, TrainConfig(epochs=epochs, lr=lr, batch_size=batch, warmup=0.05,
                                                      weight_decay=0.0, seed=seed), tokenizer.pad_token_id,
                     device=torch.device("cpu"))


def keyword_classifier(seed: int = 0) -> TextClassifier:
    """A trained 2-layer BERT whose prediction depends on one keyword (about 2 s on a CPU)."""
    tokenizer = tiny_tokenizer()
    model = tiny_bert(seed=seed)
    texts, labels = keyword_sentences(400, seed=seed)
    train_on(model, tokenizer, texts, labels, seed=seed)
    model.config.id2label = {0: "negative", 1: "positive"}
    model.config.label2id = {"negative": 0, "positive": 1}
    return TextClassifier(model, tokenizer, name=f"tiny-keyword-{seed}", device="cpu", source="tests/tiny_models.py")


def random_classifier(seed: int = 0, num_labels: int = 2) -> TextClassifier:
    """An untrained tiny BERT (random weights): for tests that need any model at all."""
    return TextClassifier(tiny_bert(num_labels=num_labels, seed=seed), tiny_tokenizer(), name=f"tiny-random-{seed}",
                          device="cpu", source="tests/tiny_models.py")
