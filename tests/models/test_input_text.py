"""What every model reads: invisible characters are removed before tokenization and the explanation says
so, so "gre<U+200B>at" is the one word "great"; a sentence pair with an empty second segment is refused, never read
as a single sentence. The expected encodings are those of the same text typed without the invisible characters."""
from __future__ import annotations

import numpy as np
import pytest
from test_prompted import write_spec
from tiny_models import tiny_architecture

from corpora import DataError, load_user_file
from corpora.typed_text import normalize_typed_text, typed_words
from explainers import create
from models import InputError, TextClassifier, load_classifier
from models.encoding import check_text

INVISIBLE = {"\u200b": "zero width space", "\u200c": "zero width non-joiner", "\u200d": "zero width joiner",
             "\u2060": "word joiner", "\ufeff": "zero width no-break space", "\u00ad": "soft hyphen",
             "\u200e": "left-to-right mark"}
CLEAN = "the film was great"


@pytest.mark.parametrize("character", list(INVISIBLE))
def test_an_invisible_character_inside_a_word_is_removed_and_the_explanation_says_so(keyword_classifier, character):
    encoding = keyword_classifier.encode(f"the film was gre{character}at")
    clean = keyword_classifier.encode(CLEAN)
    assert encoding.words == clean.words == ("the", "film", "was", "great")
    assert encoding.input_ids == clean.input_ids and encoding.removed_invisible == (character,)
    explanation = create("leave_one_out").explain(keyword_classifier, encoding, 1)
    np.testing.assert_array_equal(explanation.word_scores,
                                  create("leave_one_out").explain(keyword_classifier, clean, 1).word_scores)
    code = f"U+{ord(character):04X} {INVISIBLE[character]}"
    assert f"Removed 1 invisible character ({code}) before tokenization" in " ".join(explanation.warnings)
    # the same input without the character has no note, and the two are cached apart (the note is part of the answer)
    assert not any("invisible" in w for w in create("leave_one_out").explain(keyword_classifier, clean, 1).warnings)
    assert encoding.key != clean.key


@pytest.mark.parametrize("architecture", ["bert", "roberta", "gpt2", "llama", "gemma", "t5"])
def test_every_tokenizer_family_reads_the_word_whole(architecture):
    """A word-level tokenizer makes [UNK] [UNK] [UNK] of 'gre<U+200B>at' (three tokens, three pieces) without the
    rule; with it, the ids of 'great'."""
    model, tokenizer = tiny_architecture(architecture)
    classifier = TextClassifier(model, tokenizer, name=f"tiny-{architecture}", device="cpu")
    encoding = classifier.encode("the film was gre\u200bat")
    assert encoding.words[-1] == "great" and encoding.input_ids == classifier.encode(CLEAN).input_ids
    assert classifier.unknown_words(encoding) == []


def test_typed_text_keeps_an_invisible_character_in_its_word_for_the_rule_to_remove(keyword_classifier):
    typed = normalize_typed_text("\u200bThe film was gre\u200bat\u200b , isn't it ?")
    assert typed.split() == ["The\u200b", "film", "was", "gre\u200bat\u200b", ",", "is", "n't", "it", "?"]
    encoding = keyword_classifier.encode(typed)
    assert encoding.words == tuple("The film was great , is n't it ?".split())
    assert len(encoding.removed_invisible) == 3
    assert "Removed 3 invisible characters (U+200B zero width space)" in keyword_classifier.input_warnings(encoding)[0]


def test_dataset_text_and_pairs_go_through_the_same_rule(keyword_classifier):
    encoding = keyword_classifier.encode("a\u00adgreat film", "the movie was excel\u2060lent")
    assert encoding.words == ("agreat", "film", "the", "movie", "was", "excellent")
    assert encoding.removed_invisible == ("\u00ad", "\u2060") and encoding.word_segment == (0, 0, 1, 1, 1, 1)


def test_a_prompted_model_reads_the_same_words_with_the_same_note(tmp_path):
    prompted = load_classifier(write_spec(tmp_path))
    encoding = prompted.encode("the film was go\u200bod")
    assert encoding.words == ("the", "film", "was", "good")
    assert encoding.input_ids == prompted.encode("the film was good").input_ids
    assert any("invisible character" in w for w in prompted.input_warnings(encoding))


@pytest.mark.parametrize("hypothesis", ["", "   ", "\u200b", " \ufeff\t"])
def test_a_pair_with_an_empty_hypothesis_is_refused(keyword_classifier, tmp_path, hypothesis):
    with pytest.raises(InputError, match=r"The second segment \(the hypothesis\) is empty.*'Your text'"):
        keyword_classifier.encode("a man sleeps", hypothesis)
    prompted = load_classifier(write_spec(tmp_path, template="premise: {text} hypothesis: {pair} answer:",
                                          labels={"entailment": " no", "contradiction": " a"}))
    with pytest.raises(InputError, match="hypothesis"):
        prompted.encode("a man sleeps", hypothesis)
    # no pair at all is a single sentence, as asked
    assert keyword_classifier.encode("a man sleeps").pair is None


def test_a_file_row_with_an_empty_pair_is_refused_with_its_row(tmp_path):
    path = tmp_path / "pairs.csv"
    path.write_text("text,pair,label\na man sleeps,nobody sleeps,0\na dog runs,  ,1\n")
    with pytest.raises(DataError, match=r"pairs\.csv: 1 malformed row\(s\): row 2: empty pair.*\(line 3\)"):
        load_user_file(path)
    path.write_text("text,label\na man sleeps,0\n")  # a file without a pair column: single sentences
    assert load_user_file(path)[0].pair is None


def test_command_line_text_that_was_not_utf8_is_refused_not_replaced(keyword_classifier, tmp_path, capsys):
    """Python makes a lone surrogate of each byte of a non-UTF-8 argument (a Latin-1 terminal's 'très' is
    'tr\\udce8s'); no tokenizer can read it, and no guess is made."""
    from tiny_models import tiny_tokenizer

    import cli

    argument = "très bien".encode("latin-1").decode("utf-8", errors="surrogateescape")
    with pytest.raises(InputError, match=r"not UTF-8 \(byte 0xe8\).*iconv"):
        keyword_classifier.encode(argument)
    folder = tmp_path / "keyword"
    keyword_classifier.model.save_pretrained(folder)
    tiny_tokenizer().save_pretrained(folder)
    assert cli.main(["explain", "--model", str(folder), "--text", argument, "--methods", "leave_one_out",
                     "--no-cache"]) == 2
    assert "error: The text holds bytes that are not UTF-8 (byte 0xe8)" in capsys.readouterr().err


def test_a_text_of_invisible_characters_only_says_so():
    """Typed '\\u200b\\u200b' is not 'empty' to the user who typed it: the message says what it held."""
    with pytest.raises(InputError, match=r"no words: it held only 2 invisible character"):
        check_text("\u200b\u200b", None)
    assert typed_words("\u200b\u200b") == ["\u200b\u200b"]  # kept for check_text to remove and report
