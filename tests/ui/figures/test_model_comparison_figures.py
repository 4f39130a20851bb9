"""Figures of the dataset-level model comparison on hand-made rows: the size lines follow the parameter count with
their CI as a band, causal models stay off the size axis, the bars' whiskers are the CI, one randomization panel per
model with the chance band."""
from __future__ import annotations

import pandas as pd
import pytest

from evaluation.suite.model_comparison_dataset import CAUSAL, CURVE_COLUMNS, ENCODER, ROW_COLUMNS
from ui.figures import model_comparison as figures

METRIC = "known-feature.precision@k"


def _row(model, parameters, architecture, method, mean, low, high, metric=METRIC):
    return {"model": model, "parameters": parameters, "blocks": 2, "architecture": architecture, "check": "kf",
            "metric": metric, "method": method, "mean": mean, "low": low, "high": high, "n": 16,
            "reference_low": 0.05, "reference_high": 0.15, "not_applicable": None, "note": None}


@pytest.fixture()
def rows():
    data = [_row("big", 22_000_000, ENCODER, "saliency", 0.3, 0.2, 0.4),
            _row("small", 15_000_000, ENCODER, "saliency", 0.5, 0.4, 0.6),
            _row("small", 15_000_000, ENCODER, "lime", 0.9, 0.8, 1.0),
            _row("big", 22_000_000, ENCODER, "lime", 1.0, 1.0, 1.0),
            _row("causal", 22_000_000, CAUSAL, "lime", 0.1, 0.0, 0.2),
            _row("causal", 22_000_000, CAUSAL, "lime", None, None, None, metric="plaus_auprc")]
    return pd.DataFrame(data, columns=ROW_COLUMNS)


def test_size_lines_follow_the_parameter_count_with_bands(rows):
    figure = figures.size_lines(rows, METRIC)
    lines = {t.name: t for t in figure.data if t.mode == "lines+markers"}
    assert len(lines) == 2
    saliency = next(t for t in lines.values() if list(t.y) == [0.5, 0.3])
    assert list(saliency.x) == [15.0, 22.0]  # sorted by size, in millions; the causal model is not on this axis
    bands = [t for t in figure.data if t.fill == "toself"]
    band = next(t for t in bands if t.legendgroup == "saliency")
    assert list(band.x) == [15.0, 22.0, 22.0, 15.0] and list(band.y) == [0.6, 0.4, 0.2, 0.4]  # highs, then lows back
    random = next(t for t in bands if t.legendgroup == "random")
    assert sorted(set(random.y)) == [0.05, 0.15]


def test_bars_have_the_ci_as_whiskers_and_every_model(rows):
    figure = figures.architecture_bars(rows, METRIC)
    lime = next(t for t in figure.data if "LIME" in t.name)
    assert [x.split("<br>")[0] for x in lime.x] == ["big", "small", "causal"]
    assert list(lime.error_y.array) == pytest.approx([0.0, 0.1, 0.1])
    assert list(lime.error_y.arrayminus) == pytest.approx([0.0, 0.1, 0.1])
    assert len(figure.layout.shapes) == 3  # the random band behind each model's bars
    assert figures.metrics_in(rows) == [METRIC]  # a metric without any value is not offered


def test_one_randomization_panel_per_model():
    curves = pd.DataFrame([{"model": model, "method": "saliency", "stage": stage, "stage_index": i, "mean": 1 - i / 3,
                            "low": 0.9 - i / 3, "high": 1.0, "n": 3, "chance_low": -0.2, "chance_high": 0.2}
                           for model in ("a", "b") for i, stage in enumerate(["original", "head", "embeddings"])],
                          columns=CURVE_COLUMNS)
    figure = figures.randomization_panels(curves)
    assert [a.text for a in figure.layout.annotations] == ["a", "b"]
    lines = [t for t in figure.data if t.mode == "lines+markers"]
    assert [t.xaxis for t in lines] == ["x", "x2"] and list(lines[1].x) == ["original", "head", "embeddings"]
    assert sum(t.fill == "toself" for t in figure.data) == 2
