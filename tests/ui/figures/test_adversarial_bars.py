"""Paper 003's dataset summary as grouped bars, drawn without Streamlit: one bar per (measure, method), its mean, and
error bars reaching the bootstrap CI's bounds."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ui.figures.adversarial_bars import BAR_MEASURES, measure_bars


def test_each_measure_is_a_bar_group_with_its_interval():
    rows = [{"metric": metric, "method": method, "mean": 0.1 * (i + 1) + 0.01 * j, "low": 0.0, "high": 0.5}
            for i, metric in enumerate(BAR_MEASURES + ("steps_taken",)) for j, method in enumerate(("ig", "sal"))]
    table = pd.DataFrame(rows)
    measures = {m: m.upper() for m in BAR_MEASURES}
    figure = measure_bars(table, measures, {"ig": "Integrated Gradients", "sal": "Saliency"})
    assert [t.name for t in figure.data] == [m.upper() for m in BAR_MEASURES]  # only the three measures
    for i, trace in enumerate(figure.data):
        means = np.array([0.1 * (i + 1), 0.1 * (i + 1) + 0.01])
        assert list(trace.x) == ["Integrated Gradients", "Saliency"]
        np.testing.assert_allclose(trace.y, means)
        np.testing.assert_allclose(trace.error_y.array, 0.5 - means)
        np.testing.assert_allclose(trace.error_y.arrayminus, means)
    assert figure.layout.barmode == "group"
