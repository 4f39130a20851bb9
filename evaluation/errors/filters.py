"""Filtering and ordering the predictions table, and its confusion matrix (gold x predicted).

The order puts confident errors first (the mistakes the model is surest of, the most telling ones), then the
rest by rising confidence, so the doubtful correct answers come before the easy ones.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.user_regex import PatternError, search_texts
from models import UserFacingError


class FilterError(UserFacingError):
    """A filter that cannot be applied (a bad or too slow regular expression); the message says what to fix."""


@dataclass(frozen=True)
class Filters:
    misclassified: bool = False
    max_confidence: float | None = None  # keep rows whose confidence is at most this (low-confidence filter)
    gold: tuple[int, ...] | None = None  # keep these gold classes (None: any)
    predicted: tuple[int, ...] | None = None  # keep these predicted classes (None: any)
    length: tuple[int, int] | None = None  # words, both ends included
    search: str = ""
    regex: bool = False


def _search_mask(frame: pd.DataFrame, search: str, regex: bool) -> pd.Series:
    texts = frame["text"] + frame["pair"].fillna("").map(lambda p: f" {p}" if p else "")
    if not regex:
        return texts.str.contains(search, case=False, regex=False)
    try:  # time-limited, off the GIL: a backtracking pattern cannot freeze the server (evaluation/user_regex.py)
        found = search_texts(search, texts)
    except PatternError as error:
        raise FilterError(str(error)) from None
    return pd.Series(found, index=texts.index, dtype=bool)


def apply_filters(frame: pd.DataFrame, filters: Filters) -> pd.DataFrame:
    """The rows that pass every filter (``FilterError`` for a bad or too slow regular expression)."""
    keep = pd.Series(True, index=frame.index)
    if filters.misclassified:
        keep &= frame["correct"].eq(False).fillna(False).astype(bool)
    if filters.max_confidence is not None:
        keep &= frame["confidence"] <= filters.max_confidence
    if filters.gold is not None:
        keep &= frame["gold"].isin(filters.gold).fillna(False).astype(bool)
    if filters.predicted is not None:
        keep &= frame["prediction"].isin(filters.predicted)
    if filters.length is not None:
        keep &= frame["length"].between(*filters.length)
    if filters.search:
        keep &= _search_mask(frame, filters.search, filters.regex)
    return frame[keep]


def confident_errors_first(frame: pd.DataFrame) -> pd.DataFrame:
    """Errors by falling confidence, then every other row (correct or unlabelled) by rising confidence."""
    error = frame["correct"].eq(False).fillna(False).to_numpy(dtype=bool)
    key = np.where(error, -frame["confidence"].to_numpy(), 1.0 + frame["confidence"].to_numpy())
    return frame.iloc[np.lexsort((frame["index"].to_numpy(), key))]


def confusion(frame: pd.DataFrame, n_labels: int) -> np.ndarray:
    """Counts (gold, predicted) over the labelled rows."""
    labelled = frame[frame["gold"].notna()]
    if labelled.empty:  # sklearn refuses empty input
        return np.zeros((n_labels, n_labels), dtype=np.int64)
    # lazy third-party import: sklearn.metrics costs ~1.3 s that `import workbench` should not pay
    from sklearn.metrics import confusion_matrix

    return confusion_matrix(labelled["gold"].astype(int), labelled["prediction"].astype(int),
                            labels=list(range(n_labels)))


def cell_rows(frame: pd.DataFrame, gold: int, predicted: int) -> pd.DataFrame:
    """The rows of one confusion-matrix cell."""
    return frame[frame["gold"].eq(gold).fillna(False).astype(bool) & frame["prediction"].eq(predicted)]


def correct_rows(frame: pd.DataFrame, exclude: list[int], n: int) -> pd.DataFrame:
    """Up to ``n`` correctly classified rows not in ``exclude`` (dataset order): what a slice is compared with."""
    correct = frame[frame["correct"].eq(True).fillna(False).astype(bool) & ~frame["index"].isin(exclude)]
    return correct.head(n)
