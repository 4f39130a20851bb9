"""Datasets from Python objects (the library face): a list of texts or of dicts, a pandas DataFrame, a Hugging Face
``datasets.Dataset``, or a parquet file, with the columns named by the caller.

Every source becomes the rows a user file gives (text / label / pair / rationale) and goes through the same
validation (``user_file.rows_to_examples``): labels as indices or names matched to the model's labels, rationales as
word indices or marked text, every malformed row reported by its number.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

import settings
from corpora.records import DataError, Example
from corpora.user_file import Progress, load_user_file, rows_to_examples

FIELDS = ("text", "label", "pair", "rationale")


def _records(source: Any) -> tuple[str, list[dict]]:
    """(a name, a list of row dicts) from any supported source."""
    if isinstance(source, (str, Path)) and str(source).endswith(".parquet"):
        import pandas as pd  # deferred (heavy, optional): only parquet and frames need pandas

        path = Path(source)
        if not path.is_file():
            raise DataError(f"No parquet file at {path}; check the path.")
        try:
            frame = pd.read_parquet(path)
        except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid / ArrowIOError; its text may quote the file
            raise DataError(f"{path.name}: not a readable parquet file ({type(error).__name__}); save it again with "
                            f"pandas' DataFrame.to_parquet, or upload a .csv / .jsonl file.") from None
        return path.name, frame.to_dict("records")
    if hasattr(source, "to_dict") and hasattr(source, "columns"):  # a pandas DataFrame
        return "frame", source.to_dict("records")
    if hasattr(source, "column_names") and hasattr(source, "to_list"):  # a Hugging Face datasets.Dataset
        return getattr(source, "info", None) and source.info.dataset_name or "dataset", list(source.to_list())
    if isinstance(source, (str, bytes, dict)) or not isinstance(source, Iterable):
        raise DataError("Give a list of texts or of dicts, a pandas DataFrame, a Hugging Face Dataset or a "
                        ".parquet path (a dataset id such as 'sst2:dev' goes to corpora.load_dataset).")
    rows = list(source)
    return "records", [row if isinstance(row, dict) else {"text": row} for row in rows]


def examples_from(source: Any, text_column: str = "text", label_column: str | None = "label",
                  pair_column: str | None = "pair", rationale_column: str | None = "rationale",
                  label_names: tuple[str, ...] | list[str] | None = None, name: str | None = None,
                  max_rows: int | None = None) -> list[Example]:
    """Examples from ``source`` (see the module's docstring), reading the texts from ``text_column`` and, where
    present, labels, second segments and rationales from the other columns. ``label_names``: the model's labels
    (names in the label column are matched to them; integers are class indices). ``max_rows``: a file on a server
    (``file:x.parquet``) is refused past it, and its messages never list the file's own column names."""
    found_name, records = _records(source)
    name = name or found_name
    on_server = max_rows is not None
    if not records:
        raise DataError(f"{name}: no rows.")
    if max_rows is not None and len(records) > max_rows:
        raise DataError(f"{name}: more than {max_rows:,} rows; this server reads at most {max_rows:,} rows of a file "
                        f"(EXWB_UPLOAD_ROWS). Keep the first {max_rows:,} rows, or split the file.")
    columns = set().union(*(row.keys() for row in records))
    listed = "" if on_server else f" (columns: {', '.join(sorted(map(str, columns)))})"
    if text_column not in columns:
        raise DataError(f"{name}: no column '{text_column}'{listed}; name the text column with text_column= "
                        f"(--text-column on the command line).")
    mapping = {"text": text_column, "label": label_column, "pair": pair_column, "rationale": rationale_column}
    for field, column in mapping.items():
        if column is not None and field != "text" and column != field and column not in columns:
            raise DataError(f"{name}: no column '{column}' for the {field}s{listed}.")
    rows = [(number, {field: plain_cell(row.get(column)) for field, column in mapping.items() if column is not None})
            for number, row in enumerate(records, start=1)]
    examples = rows_to_examples(name, rows, label_names)
    return [replace(e, id=f"{name}:{i}", dataset=name) for i, e in enumerate(examples)]


def is_parquet(path: str | Path) -> bool:
    return Path(path).suffix.lower() == ".parquet"


def user_file_examples(path: str | Path, label_names: tuple[str, ...] | list[str] | None = None,
                       max_rows: int | None = None, progress: Progress | None = None,
                       columns: dict[str, str] | None = None) -> list[Example]:
    """A user file's examples, whatever its type: a ``.parquet`` file through ``examples_from`` (pandas), any
    other through ``user_file.load_user_file``; ``columns``: field -> the file's column for it. What the isolated
    upload parser (``isolated_parse``) and an in-process read (``registry``) both call."""
    if not is_parquet(path):
        return load_user_file(path, label_names=label_names, max_rows=max_rows, progress=progress, columns=columns)
    path = Path(path)
    examples = examples_from(str(path), **{f"{field}_column": (columns or {}).get(field, field) for field in FIELDS},
                             label_names=label_names, name=path.name,
                             max_rows=settings.upload_rows() if max_rows is None else max_rows)
    if progress is not None:  # one read, no partial progress to give: report it whole
        progress(1.0, len(examples))
    return examples


def examples_rows(source: Any) -> list[dict]:
    """The rows of any supported source as dicts, before any column is read."""
    return _records(source)[1]


def plain_cell(value):
    """A cell as a user file gives it: NaN / None absent (as an empty CSV cell), numpy scalars as Python ones,
    arrays (a parquet list column) as lists."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    return None if value is None or (isinstance(value, float) and value != value) else value
