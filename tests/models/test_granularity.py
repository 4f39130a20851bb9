"""Sentences and user spans as the players of removal methods."""
import random

import numpy as np
import pytest
from tiny_models import FILLER, KEYWORD

from explainers import create
from models import InputError
from models.granularity import by_units, sentence_groups
from models.perturb import perturbed_logits
from models.windows import encode_document

SENTENCES = ["the movie was a film .", "this story had some scenes with actors !", f"the music was {KEYWORD} .",
             "it is very quite a plot ?"]


def test_sentence_rule():
    words = "Mr. Smith saw it. It was \"good!\" J. Doe agreed? yes".split()
    groups, notes = sentence_groups(words)
    assert [" ".join(words[g.start:g.stop]) for g in groups] == ["Mr. Smith saw it.", "It was \"good!\"",
                                                                  "J. Doe agreed?", "yes"]
    assert notes == []


def test_text_without_punctuation_is_split_by_length():
    groups, notes = sentence_groups(["word"] * 60)
    assert [len(g) for g in groups] == [25, 25, 10] and "every 25 words" in notes[0]


def test_one_sentence_is_one_unit(keyword_classifier):
    units = by_units(keyword_classifier.encode("the movie was a film ."), "sentence")
    assert units.n_words == 1 and units.groups == (range(0, 6),)


def test_sentence_leave_one_out_equals_repredicting_without_the_sentence(keyword_classifier):
    text = " ".join(SENTENCES)
    units = by_units(keyword_classifier.encode(text), "sentence")
    assert units.words == tuple(SENTENCES)
    explanation = create("leave_one_out", operator="delete", score="probability").explain(keyword_classifier, units,
                                                                                          target=1)
    full = keyword_classifier.predict_text(text)[1]
    for i in range(len(SENTENCES)):
        without = " ".join(s for j, s in enumerate(SENTENCES) if j != i)
        assert explanation.word_scores[i] == pytest.approx(full - keyword_classifier.predict_text(without)[1],
                                                           abs=1e-6)
    assert int(np.argmax(explanation.word_scores)) == 2
    assert explanation.provenance["input"]["units"]["granularity"] == "sentence"


def test_sentence_removal_on_a_document_is_removing_its_words(keyword_classifier):
    rng = random.Random(1)
    sentences = [" ".join(rng.choice(FILLER) for _ in range(rng.randint(5, 12))) + " ." for _ in range(25)]
    doc = encode_document(keyword_classifier, " ".join(sentences))
    assert len(doc.windows) > 1
    units = by_units(doc, "sentence")
    assert units.n_words == 25
    keep = np.ones((3, 25), dtype=bool)
    keep[1, 4] = keep[2, [0, 13, 24]] = False
    np.testing.assert_allclose(perturbed_logits(keyword_classifier, units, keep, "pad"),
                               perturbed_logits(keyword_classifier, doc, units.word_keep(keep), "pad"), atol=1e-9)
    occlusion = create("shapley_sampling", n_samples=2).explain(keyword_classifier, units, target=1)
    assert occlusion.word_scores.shape == (25,)


def test_gradient_methods_sum_word_scores_per_unit(keyword_classifier):
    encoding = keyword_classifier.encode(" ".join(SENTENCES))
    units = by_units(encoding, "sentence")
    words = create("saliency").explain(keyword_classifier, encoding, target=1).word_scores
    sentences = create("saliency").explain(keyword_classifier, units, target=1).word_scores
    np.testing.assert_allclose(sentences, [words[g.start:g.stop].sum() for g in units.groups], rtol=1e-9)


def test_spans_by_characters_and_words(keyword_classifier):
    text = " ".join(SENTENCES)
    encoding = keyword_classifier.encode(text)
    start = text.index("music")
    by_chars = by_units(encoding, "span", spans=[(start, start + 5)])
    assert by_chars.kinds == ("rest", "span", "rest") and by_chars.words[1] == "music"
    by_words = by_units(encoding, "span", spans=[(0, 3)], span_unit="word")
    assert by_words.words[0] == "the movie was" and by_words.kinds == ("span", "rest")


@pytest.mark.parametrize("spans, message", [([(0, 5), (3, 8)], "overlap"), ([(0, 999)], "out of range"),
                                            ([("a", 2)], "not a pair"), ([], "needs spans")])
def test_bad_spans_get_a_clear_message(keyword_classifier, spans, message):
    encoding = keyword_classifier.encode(" ".join(SENTENCES))
    with pytest.raises(InputError, match=message):
        by_units(encoding, "span", spans=spans, span_unit="word")
