"""User-supplied CSV or JSONL files: a ``text`` column, optional ``label``, ``pair`` and ``rationale``.

``label`` is a class index or a label name. Names are matched to the labels of the model the file is used
with (``label_names``, case-insensitive), so ``positive`` is the model's ``positive`` whatever order the
file lists its rows in; a name that matches none of them is refused. Without a model (``label_names=None``)
the file's own names, sorted, are the classes.

``rationale`` may be word indices (a JSON list ``[0, 3]`` or ``"0,3"``, counted over the words of
``text`` then ``pair``) or the text with the human words between asterisks (``a *great* film``).
Every malformed row is reported with its row and line number; nothing is silently dropped. A CSV quote
that is never closed (which would merge the rows after it into one example) is refused with its line.
No message quotes the file's content (a header, a cell, a label): a path the server can read must not become
a way to read it (quoting no content); row and line numbers say where to look. A file of more than ``max_rows`` rows
(``settings.upload_rows()``, EXWB_UPLOAD_ROWS) is refused while it is read.
"""
from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import settings
from corpora.file_header import missing_text_column
from corpora.records import DataError, Example, split_words
from corpora.text_encoding import decode_user_bytes

MAX_REPORTED_ERRORS = 10
PROGRESS_ROWS = 5000  # rows between two progress reports (a worker process sends each to the page)
Progress = Callable[[float, int], None]  # (share of the text read, rows so far)
_MARKED = re.compile(r"^\*(.+)\*$")
_INDEX = re.compile(r"^-?\d+$")


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
    try:
        indices = {int(v) for v in value}
    except (ValueError, TypeError):  # int()'s own message would quote the cell
        raise ValueError("rationale must be word indices (whole numbers) or marked text") from None
    if any(not 0 <= i < n_words for i in indices):
        raise ValueError(f"a rationale word index is outside the {n_words} words (counted from 0)")
    return tuple(int(i in indices) for i in range(n_words))


# ----- reading rows (with the line each row starts on) ----------------------------------------------------
def _too_many_rows(name: str, max_rows: int) -> DataError:
    return DataError(f"{name}: more than {max_rows:,} rows; this server reads at most {max_rows:,} rows of a file "
                     f"(EXWB_UPLOAD_ROWS). Keep the first {max_rows:,} rows, or split the file.")


def _jsonl_rows(name: str, content: str, max_rows: int, progress: Progress | None = None) -> list[tuple[int, dict]]:
    rows: list[tuple[int, dict]] = []
    lines = content.splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        if progress is not None and rows and len(rows) % PROGRESS_ROWS == 0:
            progress(number / len(lines), len(rows))
        if len(rows) >= max_rows:
            raise _too_many_rows(name, max_rows)
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise DataError(f"{name}, line {number}: not valid JSON ({error.msg}).") from error
        if not isinstance(row, dict):
            raise DataError(f"{name}, line {number}: each line must be a JSON object.")
        rows.append((number, row))
    return rows


def _looks_like_rows(field: str, delimiter: str, n_columns: int) -> bool:
    """Does a multi-line field hold lines that read as whole rows of the file (the sign of a quote never
    closed, as opposed to a text with a line break)?"""
    later = field.splitlines()[1:]
    return any(len(next(csv.reader([line], delimiter=delimiter), [])) >= max(2, n_columns) for line in later)


def _csv_rows(name: str, content: str, delimiter: str, max_rows: int,
              progress: Progress | None = None) -> tuple[list[str], list[tuple[int, dict]]]:
    """The header and the rows as dicts keyed by it. A quote never closed, a quoted field that swallowed whole
    rows, or a row of more fields than the header is an error naming the line where that row starts."""
    stream = io.StringIO(content, newline="")
    reader = csv.reader(stream, delimiter=delimiter, strict=True)
    header: list[str] | None = None
    rows: list[tuple[int, dict]] = []
    while True:
        start = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            if "end of data" in str(error):
                raise DataError(f"{name}, line {start}: {_unclosed('')}") from error
            if "expected after" in str(error):
                raise DataError(f"{name}, line {start}: text follows a closing quote; put the whole text between "
                                f"quotes and write a quote inside it twice (\"\").") from error
            raise DataError(f"{name}, line {start}: not readable as CSV ({error}).") from error
        if not fields or fields == [""]:
            continue
        if header is None:
            header = [h.strip() for h in fields]
            continue
        if len(rows) >= max_rows:
            raise _too_many_rows(name, max_rows)
        if progress is not None and rows and len(rows) % PROGRESS_ROWS == 0:
            progress(stream.tell() / max(1, len(content)), len(rows))
        end = reader.line_num
        if end > start and (len(fields) < len(header) or any(_looks_like_rows(f, delimiter, len(header))
                                                               for f in fields if "\n" in f or "\r" in f)):
            raise DataError(f"{name}, line {start}: {_unclosed(f' before line {end}')} If the line breaks belong "
                            f"to the text, replace them by spaces.")
        if len(fields) > len(header):
            raise DataError(f"{name}, line {start}: {len(fields)} fields but the header has {len(header)}; put a "
                            f"text that contains {delimiter!r} between quotes.")
        rows.append((start, dict(zip(header, fields))))
    return header or [], rows


def _unclosed(where: str) -> str:
    return (f"a quote opened on this line is not closed{where}, so the rows after it merge into one example. "
            f"Close the quote (a quote inside quoted text is written twice: \"\") and load again.")


def _rows(path: Path, content: str, max_rows: int,
          progress: Progress | None = None) -> tuple[list[str], list[tuple[int, dict]]]:
    """(column names, [(line, row)]) of a CSV/TSV or JSONL file."""
    suffix = path.suffix.lower()
    if suffix in {".jsonl", ".json"}:
        rows = _jsonl_rows(path.name, content, max_rows, progress)
        return (list(rows[0][1]) if rows else []), rows
    if suffix in {".csv", ".tsv"}:
        return _csv_rows(path.name, content, "\t" if suffix == ".tsv" else ",", max_rows, progress)
    raise DataError(f"{path.name}: unsupported file type; use .csv, .tsv or .jsonl.")


# ----- labels ----------------------------------------------------------------------------------------------
def _is_index(value) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and bool(_INDEX.match(value.strip())))


def file_label_names(raw_labels) -> tuple[str, ...]:
    """The classes of a file read without a model: its label names sorted, or ``class i`` for indices."""
    given = [label for label in raw_labels if label not in (None, "")]
    textual = sorted({str(label).strip() for label in given if not _is_index(label)})
    if textual:
        return tuple(textual)
    top = max((int(label) for label in given), default=-1)
    return tuple(f"class {i}" for i in range(top + 1))


def label_index(value, names: tuple[str, ...], from_model: bool) -> int | None:
    """The class index of one row's label: an index, or a name (matched case-insensitively to the model's
    label names when ``from_model``); ValueError with what to write instead."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    choices = f"{', '.join(names)}; or a class index 0-{len(names) - 1}"
    if _is_index(value):
        index = int(value)
        if not 0 <= index < len(names):
            raise ValueError(f"a label index outside 0..{len(names) - 1} ({choices.split('; ')[0]})")
        return index
    text = str(value).strip()
    if from_model:
        folded = [n.casefold() for n in names]
        if text.casefold() in folded:
            return folded.index(text.casefold())
        raise ValueError(f"the label matches none of the model's labels ({choices})")
    if text in names:
        return names.index(text)
    raise ValueError("unknown label")


# ----- the file ---------------------------------------------------------------------------------------------
def load_user_file(path: str | Path, content: str | None = None,
                   label_names: tuple[str, ...] | list[str] | None = None,
                   max_rows: int | None = None, progress: Progress | None = None,
                   columns: dict[str, str] | None = None) -> list[Example]:
    """Read and validate a user file (``content`` lets an upload be read without touching disk).

    ``columns``: field -> the file's column for it (text / label / pair / rationale; the CLI's --text-column ...),
    when the file does not use the field names themselves.

    ``label_names``: the labels of the model the file is used with (give them whenever a model is known:
    gold labels are then that model's class indices); None reads the file on its own. ``max_rows``: the most
    rows read (None: ``settings.upload_rows()``). ``progress(share of the text read, rows so far)`` is called every
    ``PROGRESS_ROWS`` rows. Who may read which path is ``file_access``'s to decide.
    """
    path = Path(path)
    note = None  # how the bytes were read, when not as UTF-8 (corpora/text_encoding.py); kept on every example
    if content is None:
        try:
            decoded = decode_user_bytes(path.read_bytes(), path.name)  # never a character replaced
            content, note = decoded.text, decoded.note
        except OSError as error:
            raise DataError(f"Cannot read {path}: {error.strerror}.") from error
    mapping = {field: column for field, column in (columns or {}).items() if column}
    header, rows = _rows(path, content, settings.upload_rows() if max_rows is None else max_rows, progress)
    if not rows:
        raise DataError(f"{path.name}: no rows found.")
    if mapping:
        missing = [f"{field} column '{column}'" for field, column in mapping.items() if column not in header]
        if missing:  # the user's option values are named, never the file's own headers
            raise DataError(f"{path.name}: no {', no '.join(missing)} in the first row; check the column options "
                            f"(--text-column, --label-column, --pair-column).")
        rows = [(line, {field: row.get(mapping.get(field, field)) for field in ("text", "label", "pair", "rationale")
                        if mapping.get(field, field) in row}) for line, row in rows]
        header = ["text"]
    if "text" not in header:
        raise DataError(missing_text_column(path.name, len(header)))
    return rows_to_examples(path.name, rows, label_names, note)


def rows_to_examples(name: str, rows: list[tuple[int, dict]], label_names: tuple[str, ...] | list[str] | None = None,
                     note: str | None = None) -> list[Example]:
    """Validated examples from ``(line, row)`` pairs whose keys are text / label / pair / rationale: a file's rows,
    or Python records (``corpora/objects.py``); every malformed row is reported, none dropped."""
    path = Path(name)
    from_model = label_names is not None
    names = tuple(label_names) if label_names is not None else file_label_names(row.get("label") for _, row in rows)
    examples, errors = [], []
    for number, (line, row) in enumerate(rows, start=1):
        try:
            text = str(row.get("text") or "").strip()
            if not text:
                raise ValueError("empty text")
            pair = None if row.get("pair") is None else str(row["pair"]).strip()
            if pair == "":  # never read silently as a single sentence: a pair model needs both
                raise ValueError("empty pair: give the row its second segment, or put single sentences in a file "
                                 "without a 'pair' column")
            label = label_index(row.get("label"), names, from_model)
            n_words = len(split_words(text)) + (len(split_words(pair)) if pair else 0)
            rationale = _parse_rationale(row.get("rationale"), n_words, text, pair)
        except (ValueError, TypeError) as error:
            errors.append(f"row {number}: {error} (line {line})")
            continue
        examples.append(Example(id=f"file:{path.name}:{number - 1}", text=text, pair=pair, label=label,
                                label_names=names, rationale=rationale, dataset=f"file:{path.name}",
                                extra={"file_note": note} if note else {}))
    if errors:
        shown = "; ".join(errors[:MAX_REPORTED_ERRORS])
        more = f" (and {len(errors) - MAX_REPORTED_ERRORS} more)" if len(errors) > MAX_REPORTED_ERRORS else ""
        raise DataError(f"{path.name}: {len(errors)} malformed row(s): {shown}{more}. Fix them and load again.")
    return examples
