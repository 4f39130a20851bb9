"""A user's file is read as written: UTF-8 and byte-order-marked UTF-16/32 exactly, Latin-1 / Windows-1252
read as such with a note that says so, and everything that cannot be told is refused with what to do; never a
character replaced by U+FFFD."""
from __future__ import annotations

import pytest

from corpora import DataError, load_user_file
from corpora.text_encoding import decode_user_bytes

ROWS = [("c'est très bien ; un régal", "positive"), ("un film médiocre", "negative")]
GERMAN = [("„Schöne Grüße“ – ein großartiger Film …", "positive")]


def csv_text(rows) -> str:
    return "text,label\n" + "".join(f"{text},{label}\n" for text, label in rows)


def load(tmp_path, data: bytes, name: str = "reviews.csv"):
    path = tmp_path / name
    path.write_bytes(data)
    return load_user_file(path)


@pytest.mark.parametrize("codec", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf_files_are_read_exactly_and_without_a_note(tmp_path, codec):
    data = csv_text(ROWS).encode(codec)
    if codec in ("utf-16-le", "utf-16-be"):  # these codecs write no byte-order mark: add the one a program writes
        data = "\ufeff".encode(codec) + data
    examples = load(tmp_path, data)
    assert [(e.text, e.label_name) for e in examples] == ROWS  # the header is 'text', not '\ufefftext'
    assert all("file_note" not in e.extra for e in examples)


@pytest.mark.parametrize("rows, codec", [(ROWS, "latin-1"), (GERMAN, "cp1252")])
def test_a_latin1_file_is_read_as_written_and_says_so(tmp_path, rows, codec):
    examples = load(tmp_path, csv_text(rows).encode(codec))
    assert [(e.text, e.label_name) for e in examples] == rows
    note = examples[0].extra["file_note"]
    assert "reviews.csv is not UTF-8: read as Latin-1 (cp1252)" in note and "UTF-8" in note
    first_accented = next(w for w in rows[0][0].split() if not w.isascii())
    assert repr(first_accented) in note  # the reader sees a word as read, to check it


def test_utf16_without_a_byte_order_mark_is_refused_by_name(tmp_path):
    with pytest.raises(DataError, match=r"reviews\.csv: .*UTF-16 or UTF-32 .*without a byte-order mark.*UTF-8"):
        load(tmp_path, csv_text(ROWS).encode("utf-16-le"))


def test_a_file_mixing_utf8_and_latin1_is_refused_with_the_line(tmp_path):
    data = csv_text(ROWS[:1]).encode("utf-8") + "un film médiocre,negative\n".encode("latin-1")
    line = data[:data.index("médiocre".encode("latin-1"))].count(b"\n") + 1
    with pytest.raises(DataError, match=rf"mostly UTF-8, but byte 0xe9 on line {line} is not.*Save it as UTF-8"):
        load(tmp_path, data)


def test_an_encoding_that_cannot_be_told_is_refused_with_what_to_do(tmp_path):
    # Windows-1251 Russian: KOI8-R, Windows-1253 (Greek) and others read these bytes as equally clean text
    data = csv_text([("это очень хороший фильм", "positive"), ("плохой фильм", "negative")]).encode("cp1251")
    with pytest.raises(DataError, match=r"not UTF-8 \(byte 0x.. on line 2\), and its encoding cannot be told.*"
                                        r"Save it as UTF-8"):
        load(tmp_path, data)


@pytest.mark.parametrize("data", [csv_text(ROWS).encode("latin-1"), csv_text(GERMAN).encode("cp1252"),
                                  csv_text(ROWS).encode("utf-16"), "text\ntrès\n".encode("latin-1"),
                                  bytes(range(256)), b"text\n\x81\x8d\x8f\x90\x9d\n"])
def test_no_reading_ever_replaces_a_character(data):
    try:
        decoded = decode_user_bytes(data, "f.csv")
    except DataError:
        return
    assert "\ufffd" not in decoded.text and decoded.text.encode(decoded.encoding.replace("-sig", "")) \
        .endswith(data[-4:])
