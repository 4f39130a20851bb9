"""The attack refuses a text longer than the model's window: a clear message per input, never a silent
cut; the other inputs of the same batch are attacked as before."""
import random

import pytest
from tiny_models import FILLER, KEYWORD

from evaluation.adversarial.attack import attack, attack_many
from evaluation.adversarial.config import config_for
from evaluation.adversarial.result import AttackError, AttackResult
from models.windows import DocumentEncoding, encode_document

SHORT = f"a fine and {KEYWORD} film , truly moving"


def long_text() -> str:
    rng = random.Random(2)
    words = [rng.choice(FILLER) for _ in range(150)]
    words[40] = KEYWORD
    return " ".join(words)


def test_a_document_is_refused_and_the_short_input_beside_it_attacked(keyword_classifier):
    document = encode_document(keyword_classifier, long_text())
    assert isinstance(document, DocumentEncoding)
    short = keyword_classifier.encode(SHORT)
    results = attack_many(keyword_classifier, [short, document], "saliency", config_for("paper-003", steps=2))
    assert isinstance(results[0], AttackResult)
    assert isinstance(results[1], AttackError)
    message = str(results[1])
    assert f"{document.n_tokens:,} tokens" in message and str(keyword_classifier.max_length) in message
    assert "does not cut" in message and "shorten" in message


def test_a_text_the_tokenizer_cut_is_refused_too(keyword_classifier):
    cut = keyword_classifier.encode(long_text())
    assert cut.truncated_tokens > 0
    with pytest.raises(AttackError, match="more than the"):
        attack(keyword_classifier, cut, "input_x_gradient", config_for("paper-003", steps=2))
    full = encode_document(keyword_classifier, long_text())
    assert f"{cut.n_tokens + cut.truncated_tokens:,} tokens" in str(
        attack_many(keyword_classifier, [full], "saliency", config_for("paper-003", steps=2))[0])
