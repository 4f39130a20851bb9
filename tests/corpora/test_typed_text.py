"""Typed text is split as the datasets are: punctuation and clitics become words."""
from __future__ import annotations

import pytest

from corpora import load_dataset, normalize_typed_text, split_words, typed_words


@pytest.mark.parametrize("typed, split", [
    ("A breathtaking, funny film!", "A breathtaking , funny film !"),
    ("Breathtaking, isn't it?", "Breathtaking , is n't it ?"),
    ("you've seen it; I'm sure they'd agree", "you 've seen it ; I 'm sure they 'd agree"),
    ("it's k-19 (3.5 stars)... o'brien's", "it 's k-19 ( 3.5 stars ) ... o'brien 's"),
    ("Mr. Smith in the U.S. -- a \"hit\"", "Mr. Smith in the U.S. -- a \" hit \""),
    ("don\u2019t   stop\n  now", "do n't stop now"),
    ("", ""),
])
def test_typed_text_is_split_like_the_datasets(typed, split):
    assert normalize_typed_text(typed) == split
    assert typed_words(typed) == split_words(split)


def test_dataset_sentences_are_left_as_they_are():
    # SST-2 is PTB-tokenised: splitting it again changes (almost) nothing; the few changes are PTB escapes (\/)
    sentences = [e.text for e in load_dataset("sst2:dev")]
    unchanged = sum(normalize_typed_text(t) == " ".join(t.split()) for t in sentences)
    assert unchanged / len(sentences) > 0.98
    assert normalize_typed_text("it 's a charming and often affecting journey .") == \
        "it 's a charming and often affecting journey ."
    assert normalize_typed_text(normalize_typed_text("Wow, isn't it?")) == normalize_typed_text("Wow, isn't it?")
