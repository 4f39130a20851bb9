"""A cheap look at a user file's first row, before any job starts: a bad file fails at once, not after a queue.

A readable ``.csv`` that is not a dataset (no ``text`` column) used to start Report card and Compare models runs
whose cells then failed one by one. ``check_header`` reads at most ``HEADER_BYTES`` of the file's start, finds its
first row (a CSV/TSV header, or the first JSON object of a JSONL file) and refuses a file whose first row names no
``text`` column, with the message the full read gives (``missing_text_column``). It decides only when it
is sure: a first row longer than the window, or bytes it cannot read cheaply (UTF-16 without a byte-order mark),
are left to the full read, which reports them. Like every message in ``corpora``, none quotes the file's content.
"""
from __future__ import annotations

import codecs
import csv
import json
from pathlib import Path

from corpora.records import DataError
from corpora.text_encoding import BOMS

HEADER_BYTES = 64 * 1024  # a header row is far shorter; a JSONL object longer than this is checked by the full read


def _start_text(data: bytes) -> str | None:
    """The window's bytes as text (a character cut at the window's end dropped); None when not readable cheaply."""
    for bom, codec, _label in BOMS:
        if data.startswith(bom):
            return codecs.getincrementaldecoder(codec)(errors="ignore").decode(data)
    if b"\x00" in data:  # UTF-16/32 without a byte-order mark: the full read says what to do
        return None
    return data.decode("utf-8", errors="ignore")  # a legacy 8-bit file: column names are ASCII either way


def first_row_columns(path: Path) -> list[str] | None:
    """The column names of the file's first row; None when they cannot be told from its first ``HEADER_BYTES``."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(HEADER_BYTES + 1)
    except OSError:
        return None  # file_access reported what it could; the full read gives the reason
    whole = len(data) <= HEADER_BYTES
    text = _start_text(data[:HEADER_BYTES])
    if text is None:
        return None
    lines = text.splitlines(keepends=True)
    for number, line in enumerate(lines):
        if not line.strip():
            continue
        complete = number < len(lines) - 1 or whole  # the line ends inside the window
        if not complete:
            return None
        if path.suffix.lower() in (".jsonl", ".json"):
            try:
                row = json.loads(line)
            except ValueError:
                return None  # the full read names the line
            return list(row) if isinstance(row, dict) else None
        if line.count('"') % 2:  # a quote the line does not close: the header spans lines; the full read parses it
            return None
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        return [c.strip() for c in next(csv.reader([line], delimiter=delimiter), [])]
    return [] if whole else None


def missing_text_column(name: str, n_columns: int) -> str:
    """The message for a file whose first row has no ``text`` column (the header check's and the full read's)."""
    return (f"{name}: a 'text' column is required, and none of the {n_columns} column(s) of the first row is named "
            f"'text'. Name the column that holds the texts 'text' (lower case; optional columns: 'label', 'pair', "
            f"'rationale'), or choose another file.")


def check_header(path: str | Path, text_column: str = "text") -> None:
    """DataError (naming the missing column and how to fix it) when the file's first row has no ``text`` column,
    or the file has no row at all."""
    path = Path(path)
    columns = first_row_columns(path)
    if columns == []:
        raise DataError(f"{path.name}: no rows found. A dataset file has a first row naming its columns ('text', "
                        f"optional 'label', 'pair', 'rationale') and one row per example.")
    if columns is not None and text_column not in columns:
        if text_column != "text":  # the user's option value is named, never the file's own headers
            raise DataError(f"{path.name}: no text column '{text_column}' in the first row; check the column options "
                            f"(--text-column, --label-column, --pair-column).")
        raise DataError(missing_text_column(path.name, len(columns)))
