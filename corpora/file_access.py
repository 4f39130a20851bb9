"""Which user dataset files (``file:<path>``) may be read: the one place that decides it (shared mode).

- Shared-server mode (``settings.shared_mode()``, EXWB_SHARED=1): a path is read only if it resolves (symlinks
  followed) inside the uploads folder (``settings.uploads_dir()``) or a folder the admin opened
  (EXWB_DATA_FOLDERS), is a regular readable file with a dataset suffix. Anything else gets one message,
  ``NOT_AVAILABLE``, the same whether the file is missing, a directory, unreadable or outside the folders, so
  the message tells a browser user nothing about the server's files.
- Otherwise (a single user on their own machine, the command line): any path, checked first (exists, a regular
  file, a dataset suffix, readable, not over ``settings.upload_mb()``) with a message that says which.

No message here or in ``user_file`` ever quotes a file's content.
"""
from __future__ import annotations

import os
from pathlib import Path

import settings
from corpora.records import DataError

SUFFIXES = (".csv", ".tsv", ".jsonl", ".json", ".parquet")  # parquet: for the library's data frames
NOT_AVAILABLE = ("This file is not available on this shared server. Choose a built-in dataset, upload a file, or "
                 "pick one of the files the administrator shared.")


def allowed_folders() -> list[Path]:
    """The folders a browser user's file may lie in (shared mode): the uploads folder, then the admin's."""
    return [settings.uploads_dir(), *settings.data_folders()]


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.is_relative_to(folder.resolve())
    except OSError:
        return False


def _too_big(path: Path, size: int) -> DataError | None:
    limit = settings.upload_mb()
    if size > limit * 1_000_000:
        return DataError(f"{path.name} is {size / 1_000_000:.1f} MB; this server reads user files up to "
                         f"{limit:g} MB (EXWB_UPLOAD_MB). Keep fewer rows, or ask the administrator.")
    return None


def _shared_file(text: str) -> Path:
    try:
        path = Path(text).expanduser().resolve()
        ok = (path.suffix.lower() in SUFFIXES and any(_inside(path, f) for f in allowed_folders())
              and path.is_file() and os.access(path, os.R_OK))
        size = path.stat().st_size if ok else 0
    except (OSError, RuntimeError, ValueError):  # RuntimeError: a symlink loop
        ok = False
    if not ok:
        raise DataError(NOT_AVAILABLE)
    error = _too_big(path, size)
    if error:
        raise error
    return path


def _local_file(text: str) -> Path:
    path = Path(text).expanduser()
    if not text.strip():
        raise DataError("No file given: write file:<path to a .csv, .tsv or .jsonl file>.")
    if path.suffix.lower() not in SUFFIXES:
        raise DataError(f"{path.name}: unsupported file type; use .csv, .tsv, .jsonl or .parquet.")
    try:
        if not path.exists():
            raise DataError(f"No file at {path}. Check the path (it is read on the machine the app runs on).")
        if not path.is_file():
            raise DataError(f"{path} is not a file (a folder?); give the path of a .csv, .tsv or .jsonl file.")
        if not os.access(path, os.R_OK):
            raise DataError(f"{path} cannot be read (no permission); copy it somewhere you can read.")
        size = path.stat().st_size
    except OSError as error:
        raise DataError(f"Cannot read {path}: {error.strerror}.") from error
    too_big = _too_big(path, size)
    if too_big:
        raise too_big
    return path


def readable_file(text: str | Path) -> Path:
    """The file a ``file:<text>`` dataset id names, once it may be read; DataError with the message otherwise."""
    return _shared_file(str(text)) if settings.shared_mode() else _local_file(str(text))


def shared_files() -> list[Path]:
    """The dataset files of the admin's folders (EXWB_DATA_FOLDERS), recursively, sorted; what a browser user
    may pick by name in shared mode."""
    found = []
    for folder in settings.data_folders():
        if folder.is_dir():
            found += [p for p in folder.rglob("*") if p.suffix.lower() in SUFFIXES and p.is_file()
                      and _inside(p.resolve(), folder)]  # a link out of the folder is not offered
    return sorted(dict.fromkeys(found))


def shown_name(path: str | Path) -> str:
    """A file's name as a browser user sees it: relative to the admin folder it lies in, else its file name."""
    path = Path(path)
    for folder in settings.data_folders():
        if path.is_relative_to(folder):
            return f"{folder.name}/{path.relative_to(folder)}"
    return path.name
