"""User files read right: label names matched to the model's labels, and CSV quotes that are never closed
refused with their line."""
from __future__ import annotations

import json

import pytest

from corpora import NLI_LABELS, SENTIMENT_LABELS, DataError, load_dataset, load_user_file


def _csv(tmp_path, body: str, name: str = "mine.csv"):
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


# ----- labels -------------------------------------------------------------------------------------------------
def test_a_file_of_positive_rows_gets_the_models_positive(tmp_path):
    # read on its own the file has one class ('positive' = 0); with the model's labels it is class 1
    path = _csv(tmp_path, "text,label\na fine film,positive\na great film,positive\n")
    examples = load_user_file(path, label_names=SENTIMENT_LABELS)
    assert [e.label for e in examples] == [1, 1]
    assert [e.label_name for e in examples] == ["positive", "positive"]
    assert examples[0].label_names == SENTIMENT_LABELS
    assert [e.label for e in load_dataset(f"file:{path}", label_names=list(SENTIMENT_LABELS))] == [1, 1]


def test_nli_label_names_are_not_permuted_and_case_does_not_matter(tmp_path):
    # sorted file names would be contradiction 0, entailment 1, neutral 2; the model says 0 1 2 = e n c
    path = tmp_path / "nli.jsonl"
    rows = [("a man sleeps", "a man is awake", "Contradiction"), ("a dog runs", "an animal moves", "entailment"),
            ("a girl sings", "a girl sings well", " NEUTRAL ")]
    path.write_text("\n".join(json.dumps({"text": t, "pair": p, "label": y}) for t, p, y in rows))
    examples = load_user_file(path, label_names=NLI_LABELS)
    assert [e.label for e in examples] == [NLI_LABELS.index("contradiction"), NLI_LABELS.index("entailment"),
                                          NLI_LABELS.index("neutral")] == [2, 0, 1]


def test_indices_are_the_models_class_indices(tmp_path):
    path = _csv(tmp_path, "text,label\na fine film,1\na dull film,0\nso so,\n")
    assert [e.label for e in load_user_file(path, label_names=SENTIMENT_LABELS)] == [1, 0, None]
    bad = _csv(tmp_path, "text,label\na fine film,2\n", "bad.csv")
    with pytest.raises(DataError, match=r"row 1: a label index outside 0\.\.1 \(negative, positive\) \(line 2\)"):
        load_user_file(bad, label_names=SENTIMENT_LABELS)


def test_a_label_name_the_model_does_not_have_is_refused_with_what_to_write(tmp_path):
    path = _csv(tmp_path, "text,label\na fine film,positive\na dull film,bad\n", "reviews.csv")
    with pytest.raises(DataError) as error:
        load_user_file(path, label_names=SENTIMENT_LABELS)
    message = str(error.value)
    assert "bad" not in message  # the row and line say where; the cell is never quoted
    assert message.startswith("reviews.csv: 1 malformed row(s): row 2: the label matches none of the model's "
                              "labels (negative, positive; or a class index 0-1) (line 3)")
    with pytest.raises(DataError, match="matches none of the model's labels"):
        load_dataset(f"file:{path}", label_names=SENTIMENT_LABELS)


# ----- CSV quotes -----------------------------------------------------------------------------------------------
def test_a_quote_never_closed_is_refused_with_its_line(tmp_path):
    # before: one example whose text swallowed the next rows, labels lost, no error
    path = _csv(tmp_path, 'text,label\na fine film,1\n"a great film,1\nbad movie,0\nfine,1\n')
    with pytest.raises(DataError, match=r"^mine\.csv, line 3: a quote opened on this line is not closed"):
        load_user_file(path)


def test_a_quote_closed_rows_later_is_refused_with_both_lines(tmp_path):
    # the quote in the last column closes at the end of line 4: the csv module reads 1 row where the file has 3
    path = _csv(tmp_path, 'text,label,rationale\na dull plot,0,"a *dull* plot\na great film,1,[1]\n'
                          'bad film,0,[0]"\n')
    with pytest.raises(DataError, match=r"line 2: a quote opened on this line is not closed before line 4"):
        load_user_file(path)
    # a quoted text followed by more text on its line is refused by the strict reader, with the row's line
    path = _csv(tmp_path, 'text,label\na film,1\n"a great" film,1\n', "glued.csv")
    with pytest.raises(DataError, match=r"glued\.csv, line 3: text follows a closing quote"):
        load_user_file(path)


def test_a_text_with_a_real_line_break_is_kept(tmp_path):
    path = _csv(tmp_path, 'text,label\n"first line\nsecond line",1\n"with, a comma",0\nplain,1\n')
    examples = load_user_file(path, label_names=SENTIMENT_LABELS)
    assert [e.text for e in examples] == ["first line\nsecond line", "with, a comma", "plain"]
    assert [e.label for e in examples] == [1, 0, 1]


def test_a_row_with_more_fields_than_the_header_is_refused(tmp_path):
    path = _csv(tmp_path, "text,label\na fine, warm film,1\n")
    with pytest.raises(DataError, match=r"line 2: 3 fields but the header has 2; put a text that contains ','"):
        load_user_file(path)


def test_errors_name_the_row_and_its_line_past_a_multi_line_text(tmp_path):
    path = _csv(tmp_path, 'text,label\n"two\nlines",1\n"",0\n')
    with pytest.raises(DataError, match=r"row 2: empty text \(line 4\)"):
        load_user_file(path)
