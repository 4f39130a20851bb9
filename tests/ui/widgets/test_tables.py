"""Table helpers: method ids shown as labels, numbers spelt "nan" treated as missing, wide text columns."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ui.widgets.tables import column_widths, labelled, missing_as_none


def test_method_ids_become_labels_in_columns_index_and_header():
    frame = pd.DataFrame({"method": ["input_x_gradient", "random baseline"], "value": [0.5, 0.1]})
    assert list(labelled(frame)["method"]) == ["Input x Gradient", "random baseline"]
    wide = pd.DataFrame({"lime:paper-000": ["0.1"], "operator": ["delete"]}, index=pd.Index(["leave_one_out"],
                                                                                          name="method"))
    shown = labelled(wide, index=True, header=True)
    assert list(shown.columns) == ["LIME (paper-000)", "operator"]
    assert list(shown.index) == ["Leave-one-out"] and shown.index.name == "method"
    assert list(frame["method"]) == ["input_x_gradient", "random baseline"]  # the caller's frame is untouched


def test_numbers_spelt_nan_are_missing_and_other_text_is_kept():
    frame = pd.DataFrame({"a": ["nan", "nan [nan, nan]", "0.5 [0.4, 0.6]", "nanometre"], "b": [1.0, np.nan, 2, 3]})
    out = missing_as_none(frame)
    assert out["a"].isna().tolist() == [True, True, False, False]
    assert out["b"].isna().tolist() == [False, True, False, False]


def test_long_text_columns_get_wide_columns():
    frame = pd.DataFrame({"verdict": ["fails"], "why": ["similarity stays above the threshold at the last stage"],
                          "value": [0.3]})
    assert set(column_widths(frame)) == {"why"}
