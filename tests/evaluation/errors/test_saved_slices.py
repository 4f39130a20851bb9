"""Saved slices: a named selection kept in the result store with its metrics (counted by hand here),
listed per predictions run, replaced by name, reopened and exported; bad saves get messages."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from test_filters import table

from evaluation.errors import Filters, apply_filters
from evaluation.errors.saved_slices import export_slices, load_slice, save_slice, saved_slices, slice_metrics
from evaluation.errors.slices import SliceSummary
from evaluation.runs.store import ResultStore
from models import UserFacingError


def test_metrics_of_a_slice_by_hand():
    rows = table()  # 7 rows, 6 labelled, errors at rows 1, 2, 3; confidences from the hand-written table
    metrics = slice_metrics(rows)
    assert metrics == {"examples": 7, "labelled": 6, "errors": 3, "accuracy": pytest.approx(3 / 6),
                       "mean_confidence": pytest.approx((0.95 + 0.90 + 0.55 + 0.60 + 0.70 + 0.52 + 0.80) / 7)}


def test_save_list_replace_reopen_and_export(tmp_path):
    store = ResultStore(tmp_path / "store.sqlite")
    errors = apply_filters(table(), Filters(misclassified=True))
    summary = SliceSummary("leave_one_out", ["1", "2", "3"], ["0"], {"1": ["dull"]},
                           pd.DataFrame([{"class": "positive", "word": "dull", "slice": 1}]))
    first = save_slice(store, "confident errors", "predictions-run", Filters(misclassified=True), errors, summary)
    save_slice(store, "short ones", "predictions-run", Filters(length=(1, 3)),
               apply_filters(table(), Filters(length=(1, 3))))
    save_slice(store, "elsewhere", "another-run", Filters(), table())
    listed = saved_slices(store, "predictions-run")
    assert sorted(listed["name"]) == ["confident errors", "short ones"]
    row = listed[listed["name"] == "confident errors"].iloc[0]
    assert (row["examples"], row["errors"], row["accuracy"], row["method"]) == (3, 3, 0.0, "leave_one_out")
    # the same name again replaces the slice
    second = save_slice(store, "confident errors", "predictions-run", Filters(misclassified=True),
                        errors.head(2))
    assert second == first and len(saved_slices(store, "predictions-run")) == 2  # the id follows the name
    reopened = load_slice(store, second)
    assert reopened["indices"] == [int(i) for i in errors.head(2)["index"]]
    assert reopened["filters"]["misclassified"] is True and reopened["summary"] is None
    exported = export_slices(store, "predictions-run")
    assert {s["name"] for s in exported} == {"confident errors", "short ones"}
    json.dumps(exported)  # plain JSON all the way down


def test_bad_saves_get_messages(tmp_path):
    store = ResultStore(tmp_path / "store.sqlite")
    with pytest.raises(UserFacingError, match="name"):
        save_slice(store, "  ", "run", Filters(), table())
    with pytest.raises(UserFacingError, match="empty"):
        save_slice(store, "none", "run", Filters(), table().head(0))
    with pytest.raises(UserFacingError, match="No saved slice"):
        load_slice(store, "nothing")
