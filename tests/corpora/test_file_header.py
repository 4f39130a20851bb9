"""The header check before a dataset job starts (corpora/file_header.py): a readable file that is no
dataset is refused by ``check_dataset_id`` with the message the full read gives, naming the missing column, and
without quoting the file; a file it cannot judge from its start is left to the full read."""
from __future__ import annotations

import codecs
import json

import pytest

from corpora import DataError, check_dataset_id, load_dataset
from corpora.file_header import HEADER_BYTES, check_header, first_row_columns

SECRET = "aws_key=AKIAEXAMPLE123"


def _full_read_message(path) -> str:
    with pytest.raises(DataError) as error:
        load_dataset(f"file:{path}")
    return str(error.value)


@pytest.mark.parametrize("name, content", [
    ("secret.csv", f"{SECRET},password\n1,2\n"),
    ("secret.tsv", f"{SECRET}\tpassword\n1\t2\n"),
    ("secret.jsonl", json.dumps({SECRET: 1, "label": 0}) + "\n"),
    ("quoted.csv", f'"{SECRET}","Text"\n"a","b"\n'),  # 'Text' is not 'text': the column name is exact
])
def test_a_file_without_a_text_column_is_refused_before_any_job_like_the_full_read(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(DataError) as error:
        check_dataset_id(f"file:{path}")
    message = str(error.value)
    assert message == _full_read_message(path)  # the same words as when the rows are read
    assert "'text' column is required" in message and "2 column(s)" in message and "lower case" in message
    assert "AKIAEXAMPLE" not in message and "password" not in message


@pytest.mark.parametrize("name, content, columns", [
    ("plain.csv", "text,label\nfine,1\n", ["text", "label"]),
    ("blank_first.csv", "\n\n text , label\nfine,1\n", ["text", "label"]),
    ("quoted.csv", '"text","label"\n"fine, really",1\n', ["text", "label"]),
    ("tabs.tsv", "label\ttext\n1\tfine\n", ["label", "text"]),
    ("rows.jsonl", '\n{"text": "fine", "label": 1}\n{"text": "bad"}\n', ["text", "label"]),
])
def test_the_first_rows_columns_are_those_the_full_read_sees(tmp_path, name, content, columns):
    path = tmp_path / name
    path.write_text(content)
    assert first_row_columns(path) == columns
    check_header(path)  # a dataset passes ...
    check_dataset_id(f"file:{path}")
    assert load_dataset(f"file:{path}")[0].text.startswith("fine")  # ... and the full read agrees


def test_byte_order_marks_are_read_and_legacy_bytes_do_not_hide_the_header(tmp_path):
    utf16 = tmp_path / "utf16.csv"
    utf16.write_bytes(codecs.BOM_UTF16_LE + "text,label\nfine,1\n".encode("utf-16-le"))
    assert first_row_columns(utf16) == ["text", "label"]
    sig = tmp_path / "sig.csv"
    sig.write_bytes(codecs.BOM_UTF8 + b"title,label\nfine,1\n")
    assert first_row_columns(sig) == ["title", "label"]
    latin = tmp_path / "latin.csv"
    latin.write_bytes("text,label\ncaf\u00e9,1\n".encode("latin-1"))
    assert first_row_columns(latin) == ["text", "label"]


def test_what_the_window_cannot_tell_is_left_to_the_full_read(tmp_path):
    long_object = tmp_path / "long.jsonl"  # a first object longer than the window: not judged here
    long_object.write_text(json.dumps({"title": "x" * (HEADER_BYTES + 10)}) + "\n")
    assert first_row_columns(long_object) is None
    check_header(long_object)
    assert "'text' column is required" in _full_read_message(long_object)
    no_bom = tmp_path / "nobom.csv"  # UTF-16 without a byte-order mark: the full read says what to do
    no_bom.write_bytes("title\nx\n".encode("utf-16-le"))
    assert first_row_columns(no_bom) is None
    open_quote = tmp_path / "open.csv"  # a header whose quote the line does not close
    open_quote.write_text('"te\nxt",label\nfine,1\n')
    assert first_row_columns(open_quote) is None
    bad_json = tmp_path / "bad.jsonl"
    bad_json.write_text("{not json\n")
    assert first_row_columns(bad_json) is None


def test_an_empty_file_is_refused_with_what_a_dataset_file_holds(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(DataError, match="no rows found.*'text'"):
        check_dataset_id(f"file:{empty}")
