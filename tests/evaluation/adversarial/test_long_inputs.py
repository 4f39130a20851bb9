"""Long inputs and the attack: a document read in windows is attacked over its windows beside the short inputs of
the same batch; a text the tokenizer cut is refused with a clear message (never a silent cut)."""
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


def test_a_document_is_attacked_over_its_windows_beside_a_short_input(keyword_classifier):
    document = encode_document(keyword_classifier, long_text())
    assert isinstance(document, DocumentEncoding)
    short = keyword_classifier.encode(SHORT)
    results = attack_many(keyword_classifier, [short, document], "saliency", config_for("paper-003", steps=2))
    assert isinstance(results[0], AttackResult) and results[0].windows is None
    assert isinstance(results[1], AttackResult) and results[1].windows["windows"] == len(document.windows)
    assert results[1].tokens == list(document.tokens)  # the whole document, not a cut


def test_a_text_the_tokenizer_cut_is_refused(keyword_classifier):
    cut = keyword_classifier.encode(long_text())
    assert cut.truncated_tokens > 0
    with pytest.raises(AttackError, match="more than the") as refused:
        attack(keyword_classifier, cut, "input_x_gradient", config_for("paper-003", steps=2))
    assert f"{cut.n_tokens + cut.truncated_tokens:,} tokens" in str(refused.value)
    assert "read it whole" in str(refused.value)
