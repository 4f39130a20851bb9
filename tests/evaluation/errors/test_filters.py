"""Filters, ordering and the confusion matrix of the predictions table, on a table written by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.errors import FilterError, Filters, apply_filters, cell_rows, confident_errors_first, confusion

ROWS = [  # text, pair, gold, prediction, confidence, length
    ("a great film", None, 1, 1, 0.95, 3),
    ("a dull film", None, 0, 1, 0.90, 3),
    ("not bad at all", None, 1, 0, 0.55, 4),
    ("great , if long", None, 0, 1, 0.60, 4),
    ("boring", None, 0, 0, 0.70, 1),
    ("no label here", None, None, 1, 0.52, 3),
    ("the premise", "a great hypothesis", 1, 1, 0.80, 5),
]


def table() -> pd.DataFrame:
    frame = pd.DataFrame(ROWS, columns=["text", "pair", "gold", "prediction", "confidence", "length"])
    frame["gold"] = frame["gold"].astype("Int64")
    frame["correct"] = pd.array([None if pd.isna(g) else bool(g == p) for g, p in zip(frame["gold"],
                                                                                      frame["prediction"])],
                                dtype="boolean")
    frame.insert(0, "index", range(len(frame)))
    return frame


def kept(filters: Filters) -> list[int]:
    return list(apply_filters(table(), filters)["index"])


def test_each_filter():
    assert kept(Filters()) == list(range(7))
    assert kept(Filters(misclassified=True)) == [1, 2, 3]  # the unlabelled row is not an error
    assert kept(Filters(max_confidence=0.6)) == [2, 3, 5]
    assert kept(Filters(gold=(0,))) == [1, 3, 4]
    assert kept(Filters(predicted=(0,))) == [2, 4]
    assert kept(Filters(length=(3, 4))) == [0, 1, 2, 3, 5]
    assert kept(Filters(search="GREAT")) == [0, 3, 6]  # case-insensitive, the pair searched too
    assert kept(Filters(search=r"^(a|no) ", regex=True)) == [0, 1, 5]
    assert kept(Filters(search="(a", regex=False)) == []
    assert kept(Filters(misclassified=True, predicted=(1,), max_confidence=0.7)) == [3]


def test_a_bad_regular_expression_says_what_to_fix():
    with pytest.raises(FilterError) as error:
        kept(Filters(search="(a", regex=True))
    assert "not a valid regular expression" in str(error.value) and "\n" not in str(error.value)


def test_confident_errors_come_first():
    assert list(confident_errors_first(table())["index"]) == [1, 3, 2, 5, 4, 6, 0]


def test_confusion_matrix_and_its_cells():
    matrix = confusion(table(), 2)
    assert np.array_equal(matrix, [[1, 2], [1, 2]])  # gold rows, predicted columns; the unlabelled row left out
    assert list(cell_rows(table(), 0, 1)["index"]) == [1, 3]
    assert list(cell_rows(table(), 1, 1)["index"]) == [0, 6]
    assert matrix.sum() == table()["gold"].notna().sum()


def test_the_confusion_matrix_of_no_row_is_zero():
    empty = apply_filters(table(), Filters(search="nothing like this"))
    assert empty.empty and np.array_equal(confusion(empty, 2), np.zeros((2, 2)))
