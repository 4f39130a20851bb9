"""Coarse to fine against the word-level method."""
import numpy as np
import pytest
from tiny_models import KEYWORD

from explainers import create
from explainers.coarse_to_fine import coarse_to_fine, top_precision
from models import InputError

SENTENCES = ["the movie was a film .", "this story had some scenes with actors !", f"the music was {KEYWORD} .",
             "it is very quite a plot ?", "the film had music ."]


def test_unlimited_budget_equals_word_level(keyword_classifier):
    encoding = keyword_classifier.encode(" ".join(SENTENCES))
    method = create("leave_one_out", operator="pad")
    result = coarse_to_fine(method, keyword_classifier, encoding, target=1, top_k=None, compare=True)
    word_level = method.explain(keyword_classifier, encoding, target=1).word_scores
    assert result.explained.all()
    np.testing.assert_allclose(result.word_scores, word_level, atol=1e-9)
    assert result.agreement["top10_precision"] == 1.0


def test_top_sentence_holds_the_keyword_and_costs_less(keyword_classifier):
    encoding = keyword_classifier.encode(" ".join(SENTENCES))
    result = coarse_to_fine(create("leave_one_out", operator="pad"), keyword_classifier, encoding, target=1,
                            top_k=1, compare=True)
    assert result.chosen == [2]
    assert encoding.words[int(np.argmax(result.word_scores))] == KEYWORD
    # 5 sentences + 4 words + 2 blocks of other words (each removed once) + the input once, against one pass per word
    assert result.forward_passes <= 5 + 4 + 2 + 1 and result.word_level_passes >= encoding.n_words
    assert result.cost_share < 0.5


def test_budget_limits_the_words(keyword_classifier):
    encoding = keyword_classifier.encode(" ".join(SENTENCES))
    result = coarse_to_fine(create("leave_one_out"), keyword_classifier, encoding, target=1, top_k=None,
                            budget_words=10)
    assert 0 < result.explained.sum() <= 10 or len(result.chosen) == 1


def test_top_precision_formula():
    assert top_precision(np.arange(20.0), np.arange(20.0), k=10) == 1.0
    assert top_precision(np.arange(20.0), -np.arange(20.0), k=10) == 0.0


def test_gradient_methods_are_refused_with_a_reason(keyword_classifier):
    with pytest.raises(InputError, match="removes words"):
        coarse_to_fine(create("saliency"), keyword_classifier, keyword_classifier.encode("a b ."))
