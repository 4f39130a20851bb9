"""Counterfactual generators: every flip a generator lists, classified afresh by the plain model, has the
flipped label; HotFlip's word is the brute-force argmax of the first-order score; rules and bad requests."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import KEYWORD, VOCAB, tiny_tokenizer
from transformers import BertConfig, BertForMaskedLM

from evaluation.errors.generators import (
    HOTFLIP,
    MASKED_LM,
    WORD_REPLACER,
    _whole_word_tokens,
    generate,
    hotflip_choices,
    loss_gradient,
    parse_rules,
)
from models import UserFacingError
from models.mlm import MaskedLMFiller

POSITIVE = f"the movie had some {KEYWORD} scenes with music"


def plain_class(classifier, text: str, pair: str | None = None) -> int:
    """The class the plain Hugging Face model gives the text (tokenized afresh, no project code on the way)."""
    inputs = classifier.tokenizer(text, pair, return_tensors="pt")
    with torch.no_grad():
        return int(classifier.model(**inputs).logits.argmax(-1)[0])


def assert_flips_repredict(classifier, flips) -> None:
    assert flips
    for flip in flips:
        text, pair = flip.texts()
        assert plain_class(classifier, text, pair) == flip.new_class
        assert flip.found == (flip.new_class != flip.original_class)


@pytest.fixture(scope="module")
def tiny_mlm() -> MaskedLMFiller:
    torch.manual_seed(3)
    config = BertConfig(vocab_size=len(VOCAB), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2)
    return MaskedLMFiller(BertForMaskedLM(config).eval(), tiny_tokenizer(), name="tiny-mlm", device="cpu")


def test_word_replacer_flips_and_keeps(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    flips = generate(keyword_classifier, encoding, WORD_REPLACER, rules=f"{KEYWORD.upper()} -> boring | good\n"
                                                                        "music -> plot\n\nabsent -> fun")
    assert_flips_repredict(keyword_classifier, flips)
    assert len(flips) == 3  # two replacements of the keyword, one of "music"; "absent" is not in the text
    flipped = [f for f in flips if f.found]
    assert {dict(f.changes)[POSITIVE.split().index(KEYWORD)] for f in flipped} == {"boring", "good"}
    assert not flips[-1].found and flips[-1].changes == ((POSITIVE.split().index("music"), "plot"),)
    assert ("replaced", KEYWORD, "boring") in flipped[0].diff() or ("replaced", KEYWORD, "good") in flipped[0].diff()


def test_masked_lm_substitution_replaces_the_top_words(keyword_classifier, tiny_mlm):
    encoding = keyword_classifier.encode(POSITIVE)
    scores = np.zeros(encoding.n_words)
    scores[POSITIVE.split().index(KEYWORD)] = 1.0
    scores[0] = 0.5
    flips = generate(keyword_classifier, encoding, MASKED_LM, filler=tiny_mlm, word_scores=scores, words=2,
                     per_word=3)
    assert_flips_repredict(keyword_classifier, flips)
    assert {i for f in flips for i, _ in f.changes} <= {0, POSITIVE.split().index(KEYWORD)}
    assert all(replacement.lower() != encoding.words[i].lower() for f in flips for i, replacement in f.changes)
    assert any(f.found for f in flips)  # any word in place of the keyword removes it


def test_hotflip_chooses_the_brute_force_argmax_and_flips(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    target = int(np.argmax(keyword_classifier.proba_of(encoding)))
    gradient, matrix = loss_gradient(keyword_classifier, encoding, target)
    ids, words = _whole_word_tokens(keyword_classifier.tokenizer)
    choices = hotflip_choices(keyword_classifier, encoding, target)
    for word, replacement, score in choices:
        position = encoding.token_word.index(word)
        original = encoding.input_ids[position]
        best, best_score = None, -np.inf
        for token, candidate in zip(ids, words):  # every whole-word token, one dot product at a time
            if token == original:
                continue
            value = sum(float(a) * float(b) for a, b in zip(matrix[token] - matrix[original], gradient[position]))
            if value > best_score:
                best, best_score = candidate, value
        assert replacement == best and score == pytest.approx(best_score, rel=1e-4, abs=1e-6)
    assert "[MASK]" not in [r for _, r, _ in choices] and all(not r.startswith("##") for _, r, _ in choices)
    flips = generate(keyword_classifier, encoding, HOTFLIP, words=3)
    assert_flips_repredict(keyword_classifier, flips)
    assert flips[0].found and flips[0].changes[0][0] == POSITIVE.split().index(KEYWORD)


def test_gradient_matches_a_finite_difference(keyword_classifier):
    """The first-order score rests on the gradient: check it against a central difference on one coordinate."""
    encoding = keyword_classifier.encode(POSITIVE)
    gradient, _ = loss_gradient(keyword_classifier, encoding, 1)
    tensors = keyword_classifier.tensors(encoding)
    base = keyword_classifier.word_embeddings(tensors["input_ids"]).detach().double()
    model = keyword_classifier.model.double()
    try:
        def loss(shift: float) -> float:
            embeds = base.clone()
            embeds[0, 2, 5] += shift
            with torch.no_grad():
                logits = model(inputs_embeds=embeds, attention_mask=tensors["attention_mask"],
                               token_type_ids=tensors.get("token_type_ids")).logits
            return float(-torch.log_softmax(logits, -1)[0, 1])

        assert gradient[2, 5] == pytest.approx((loss(1e-4) - loss(-1e-4)) / 2e-4, rel=1e-2, abs=1e-5)
    finally:
        model.float()


def test_rules_and_bad_requests(keyword_classifier):
    assert parse_rules("Great -> terrible | bad\ngreat -> awful") == {"great": ["terrible", "bad", "awful"]}
    for bad in ("", "great terrible", "great -> ", "a b -> c"):
        with pytest.raises(UserFacingError):
            parse_rules(bad)
    encoding = keyword_classifier.encode(POSITIVE)
    with pytest.raises(UserFacingError, match="masked LM"):
        generate(keyword_classifier, encoding, MASKED_LM)
    with pytest.raises(UserFacingError, match="Unknown generator"):
        generate(keyword_classifier, encoding, "scrambler")
