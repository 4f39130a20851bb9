"""Soft sufficiency / comprehensiveness on a document read in windows: the metric's value equals Zhao &
Aletras' formulas evaluated directly, with the plain model on each window's text and the document's rule over the
windows' logits."""
import random

import numpy as np
import pytest
import torch
from tiny_models import FILLER, KEYWORD

from evaluation.faithfulness.soft import mask_draws, soft_scores
from models.windows import DocumentEncoding, WindowConfig, encode_document


def document_text(n_words: int = 150, keyword_at: int = 70) -> str:
    rng = random.Random(1)
    words = [rng.choice(FILLER) for _ in range(n_words)]
    words[keyword_at] = KEYWORD
    return " ".join(words)


def direct_probability(classifier, doc, text, drop_probability, draw, target, how):
    """p(target | x') by hand: each window's text through the tokenizer, its embeddings looked up in the model,
    each element dropped where the document token's draw is below its probability, the model on each window, the
    windows' logits combined by ``how``, then the softmax."""
    words = text.split()
    token_word = np.asarray(doc.token_word)
    window_logits = []
    for window in doc.windows:
        encoded = classifier.tokenizer(" ".join(words[window.words.start:window.words.stop]), return_tensors="pt")
        inside = np.flatnonzero((token_word >= window.words.start) & (token_word < window.words.stop))
        positions = np.concatenate([[0], inside, [doc.n_tokens - 1]])  # [CLS] words [SEP] of the document
        assert len(positions) == encoded["input_ids"].shape[1]
        keep = torch.as_tensor(draw[positions] >= drop_probability[positions][:, None], dtype=torch.float32)
        with torch.no_grad():
            embedded = classifier.model.get_input_embeddings()(encoded["input_ids"])[0]
            logits = classifier.model(inputs_embeds=(embedded * keep)[None],
                                      attention_mask=encoded["attention_mask"]).logits[0]
        window_logits.append(logits.double().numpy())
    window_logits = np.stack(window_logits)
    combined = {"mean": window_logits.mean(axis=0), "max": window_logits.max(axis=0)}[how]
    return float(np.exp(combined[target]) / np.exp(combined).sum())


@pytest.mark.parametrize("how", ["mean", "max"])
def test_soft_metrics_of_a_document_equal_the_formula_on_its_windows(keyword_classifier, how):
    text = document_text()
    doc = encode_document(keyword_classifier, text, config=WindowConfig(aggregate=how))
    assert isinstance(doc, DocumentEncoding) and len(doc.windows) > 2
    target, seed, samples = 0, 3, 3  # the tiny model reads an all-zero input as class 1: class 0 has room
    scores = np.random.default_rng(0).normal(size=doc.n_words)
    scores[70] = 5.0  # the keyword ranked first: comprehensiveness drops it most often
    result = soft_scores(keyword_classifier, doc, scores, target, seed, samples)

    dim = keyword_classifier.model.get_input_embeddings().weight.shape[1]
    draws = mask_draws(seed, doc.key, samples, doc.n_tokens, dim)
    importance = (scores - scores.min()) / (scores.max() - scores.min())
    token_word = np.asarray(doc.token_word)
    words_only = token_word >= 0

    def per_token(word_probability):
        return np.where(words_only, word_probability[np.maximum(token_word, 0)], 0.0)

    no_drop = np.zeros(doc.n_tokens)
    full = direct_probability(keyword_classifier, doc, text, no_drop, draws[0], target, how)
    empty = direct_probability(keyword_classifier, doc, text, words_only.astype(float), draws[0], target, how)
    comp = [direct_probability(keyword_classifier, doc, text, per_token(importance), draws[s], target, how)
            for s in range(samples)]
    suff = [direct_probability(keyword_classifier, doc, text, per_token(1 - importance), draws[s], target, how)
            for s in range(samples)]
    room = full - empty
    assert room > 0.05  # the all-masked document loses class 0
    assert result["p_full"] == pytest.approx(full, abs=1e-5)
    assert result["p_all_masked"] == pytest.approx(empty, abs=1e-5)
    assert result["soft-comprehensiveness"] == pytest.approx(np.mean(np.maximum(0, full - np.array(comp))) / room,
                                                             abs=1e-5)
    assert result["soft-sufficiency"] == pytest.approx(np.mean(room - np.maximum(0, full - np.array(suff))) / room,
                                                       abs=1e-5)

