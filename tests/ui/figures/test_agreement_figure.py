"""The method-agreement matrix drawn without Streamlit: the values rounded, n/a where undefined, and the title a
dataset run gives it in place of the one-input title."""
from __future__ import annotations

import numpy as np

from evaluation.agreement.measures import Agreement
from ui.figures.agreement import agreement_figure


def test_the_matrix_and_a_dataset_runs_title():
    matrix = np.array([[1.0, 0.12345], [0.12345, np.nan]])
    agreement = Agreement(("saliency", "leave_one_out"), ("Saliency", "Leave-one-out"), "feature", True, matrix)
    figure = agreement_figure(agreement, k=3)
    (heatmap,) = figure.data
    assert [list(row) for row in heatmap.z] == [[1.0, 0.123], [0.123, None]]
    assert [list(row) for row in heatmap.text] == [["1.00", "0.12"], ["0.12", "n/a"]]
    assert (heatmap.zmin, heatmap.zmax) == (0, 1)  # a share, not a correlation
    assert figure.layout.title.text == "Feature agreement @3 between methods' word scores (|score|)"
    titled = agreement_figure(agreement, k=3, title="Mean Feature agreement @3 over the examples")
    assert titled.layout.title.text == "Mean Feature agreement @3 over the examples"
