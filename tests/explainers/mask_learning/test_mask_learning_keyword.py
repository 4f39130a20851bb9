"""Mask learning's reference behaviour on a model whose class is decided by one word and whose logit is a smooth
(linear) function of that word's embedding (``smooth_models.smooth_keyword_classifier``): MaRC keeps the word
(mask > 0.9) and drops most others; pAML trained on that task puts its highest score on the word."""
from __future__ import annotations

import numpy as np
import pytest
from smooth_models import smooth_keyword_classifier
from tiny_models import KEYWORD, keyword_sentences

from explainers import create
from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml


@pytest.fixture(scope="module")
def smooth_keyword():
    return smooth_keyword_classifier()


def test_the_smooth_model_decides_by_the_keyword_and_smoothly(smooth_keyword):
    texts, labels = keyword_sentences(20, seed=4)
    predicted = [int(np.argmax(smooth_keyword.predict_text(t))) for t in texts]
    assert predicted == labels
    encoding = smooth_keyword.encode("the movie was excellent")
    keyword = encoding.words.index(KEYWORD)
    for amount in (0.0, 0.25, 0.5, 0.75, 1.0):  # the keyword's embedding moved toward [PAD] (what MaRC does)
        ids = smooth_keyword.tensors(encoding)["input_ids"]
        x = smooth_keyword.word_embeddings(ids)
        pad = smooth_keyword.word_embeddings(ids.new_full(ids.shape, smooth_keyword.tokenizer.pad_token_id))
        lam = ids.new_ones(ids.shape, dtype=x.dtype)
        lam[0, keyword + 1] = amount  # token 0 is [CLS]
        logits = smooth_keyword.forward_embeds(lam[..., None] * x + (1 - lam[..., None]) * pad).detach()[0]
        assert float(logits[1] - logits[0]) == pytest.approx(8.0 * (amount - 0.5), abs=1e-5)  # float32, O(1)


@pytest.mark.parametrize("text", ["excellent music and the plot of this film is rather old and quite long",
                                  "this story had some scenes with actors and music and the plot is new but it is "
                                  "excellent"])
def test_marc_keeps_the_keyword_above_0_9_and_drops_most_other_words(smooth_keyword, text):
    encoding = smooth_keyword.encode(text)
    explanation = create("marc", preset="paper-002").explain(smooth_keyword, encoding)
    assert explanation.target == 1
    scores = explanation.word_scores
    keyword = explanation.words.index(KEYWORD)
    others = np.delete(scores, keyword)
    details = explanation.provenance["details"]
    assert scores[keyword] > 0.9
    assert np.mean(others < 0.3) >= 0.8  # the kernel's width keeps a neighbour or two on (Omega_sigma)
    assert details["p_target_kept"] > 0.9 and details["p_target_complement"] < 0.1
    assert details["stop_reason"] == "converged"


def test_paml_trained_on_the_task_puts_its_highest_score_on_the_keyword(smooth_keyword, isolated_cache):
    texts, _ = keyword_sentences(300, seed=7)
    # G of a bag-of-embeddings backbone learns only its head: a larger rate than the tiny BERT's 1e-3
    recipe = AMLRecipe(train_size=200, validation_size=40, epochs=3.0, lr=1e-2)
    prepare_aml(smooth_keyword, [(t, None) for t in texts], recipe, data_id="keyword-sentences", log=lambda _: None)
    texts, labels = keyword_sentences(30, seed=99)
    positives = [t for t, label in zip(texts, labels) if label == 1]
    for text in positives:
        explanation = create("aml", preset="pAML").explain(smooth_keyword, smooth_keyword.encode(text))
        assert explanation.target == 1
        assert explanation.words[int(np.argmax(explanation.word_scores))] == KEYWORD, text
