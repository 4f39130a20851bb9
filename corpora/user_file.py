"""User-supplied CSV or JSONL files: a ``text`` column, optional ``label``, ``pair`` and ``rationale``.

``rationale`` may be word indices (a JSON list ``[0, 3]`` or ``"0,3"``, counted over the words of
``text`` then ``pair``) or the text with the human words between asterisks (``a *great* film``).
Every malformed row is reported with its row number; nothing is silently dropped.
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from corpora.records import DataError, Example, split_words

MAX_REPORTED_ERRORS = 10
_MARKED = re.compile(r"^\*(.+)\*$")


def _parse_rationale(value, n_words: int, text: str, pair: str | None) -> tuple[int, ...] | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str) and "*" in value:
        marked_words = split_words(value)
        plain = [_MARKED.sub(r"\1", w) for w in marked_words]
        expected = split_words(text) + (split_words(pair) if pair else [])
        if plain != expected:
            raise ValueError("marked rationale text does not match the text (and pair) word for word")
        return tuple(int(bool(_MARKED.match(w))) for w in marked_words)
    if isinstance(value, str):
        value = value.strip()
        value = json.loads(value) if value.startswith("[") else [v for v in value.split(",") if v.strip()]
    if not isinstance(value, list):
        raise ValueError("rationale must be a list of word indices or marked text")
    indices = {int(v) for v in value}
    bad = [i for i in indices if not 0 <= i < n_words]
    if bad:
        raise ValueError(f"rationale word index {bad[0]} outside the {n_words} words")
    return tuple(int(i in indices) for i in range(n_words))


def _rows(path: Path, content: str) -> list[dict]:
    if path.suffix.lower() in {".jsonl", ".json"}:
        rows = []
        for number, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except ValueError as error:
                raise DataError(f"{path.name}, line {number}: not valid JSON ({error.msg}).") from error
            if not isinstance(row, dict):
                raise DataError(f"{path.name}, line {number}: each line must be a JSON object.")
            rows.append(row)
        return rows
    if path.suffix.lower() in {".csv", ".tsv"}:
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        try:
            return list(csv.DictReader(io.StringIO(content), delimiter=delimiter))
        except csv.Error as error:
            raise DataError(f"{path.name}: not a readable CSV ({error}).") from error
    raise DataError(f"{path.name}: unsupported file type; use .csv, .tsv or .jsonl.")


def load_user_file(path: str | Path, content: str | None = None,
                   label_names: tuple[str, ...] | None = None) -> list[Example]:
    """Read and validate a user file (``content`` lets an upload be read without touching disk)."""
    path = Path(path)
    if content is None:
        try:
            content = path.read_text(encoding="utf-8", errors="replace")
        except OSError as error:
            raise DataError(f"Cannot read {path}: {error.strerror}.") from error
    rows = _rows(path, content)
    if not rows:
        raise DataError(f"{path.name}: no rows found.")
    if "text" not in rows[0]:
        raise DataError(f"{path.name}: a 'text' column is required (found: {', '.join(map(str, rows[0]))}).")
    raw_labels = [row.get("label") for row in rows]
    names = label_names
    if names is None:
        textual = sorted({str(l) for l in raw_labels if l not in (None, "") and not str(l).lstrip("-").isdigit()})
        numeric = sorted({int(l) for l in raw_labels if l not in (None, "") and str(l).lstrip("-").isdigit()})
        names = tuple(textual) if textual else tuple(f"class {i}" for i in range((max(numeric) + 1) if numeric else 0))
    examples, errors = [], []
    for number, row in enumerate(rows, start=1):
        try:
            text = str(row.get("text") or "").strip()
            if not text:
                raise ValueError("empty text")
            pair = str(row["pair"]).strip() if row.get("pair") not in (None, "") else None
            label = row.get("label")
            if label in (None, ""):
                label = None
            elif str(label).lstrip("-").isdigit():
                label = int(label)
                if not 0 <= label < len(names):
                    raise ValueError(f"label {label} outside 0..{len(names) - 1}")
            elif str(label) in names:
                label = names.index(str(label))
            else:
                raise ValueError(f"unknown label {label!r}")
            n_words = len(split_words(text)) + (len(split_words(pair)) if pair else 0)
            rationale = _parse_rationale(row.get("rationale"), n_words, text, pair)
        except (ValueError, TypeError) as error:
            errors.append(f"row {number}: {error}")
            continue
        examples.append(Example(id=f"file:{path.name}:{number - 1}", text=text, pair=pair, label=label,
                                label_names=names, rationale=rationale, dataset=f"file:{path.name}"))
    if errors:
        shown = "; ".join(errors[:MAX_REPORTED_ERRORS])
        more = f" (and {len(errors) - MAX_REPORTED_ERRORS} more)" if len(errors) > MAX_REPORTED_ERRORS else ""
        raise DataError(f"{path.name}: {len(errors)} malformed row(s): {shown}{more}. Fix them and load again.")
    return examples
