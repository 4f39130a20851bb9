"""Finding the data directory: a setting, else ../shared/data beside the checkout, else the hub (opt-in)."""
from __future__ import annotations

from pathlib import Path

import settings
from corpora.records import DataError


def find_dataset_dir(folder: str) -> Path:
    """The folder holding one dataset (e.g. ``sst2-sentences``), or a DataError naming every place tried."""
    tried = []
    for base in settings.data_dir_candidates():
        candidate = base / folder
        tried.append(str(candidate))
        if candidate.is_dir():
            return candidate
    hub = "the Hugging Face hub is allowed (EXWB_ALLOW_HUB=1) but has no copy of this dataset" if settings.allow_hub() \
        else "the Hugging Face hub was not tried (set EXWB_ALLOW_HUB=1 to allow it)"
    raise DataError(
        f"Dataset folder '{folder}' not found. Tried: {', '.join(tried)}; {hub}. "
        f"Fix: set EXWB_DATA_DIR to the folder that contains '{folder}/' (for example the shared/data "
        f"folder that ships beside the project)."
    )


def read_lines(path: Path, encoding: str = "utf-8") -> list[str]:
    try:
        with open(path, encoding=encoding, errors="replace") as handle:
            # split on newlines only: str.splitlines() also breaks at U+0085, which MR's Latin-1 text contains
            return [line.rstrip("\r") for line in handle.read().split("\n")]
    except OSError as error:
        raise DataError(f"Cannot read {path}: {error.strerror}. Check the data directory (EXWB_DATA_DIR).") from error
