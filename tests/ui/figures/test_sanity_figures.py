"""The Sanity page's figures drawn without Streamlit: the randomized model's accuracy per stage, each method's mean
with its CI against the random band, and the degradation grid (its colours from the heatmap formula, every word and
stage escaped)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from evaluation.sanity import emprt
from evaluation.sanity.one_input import CHANCE
from ui.figures.degradation_grid import grid_html
from ui.figures.interval import interval_figure
from ui.figures.sanity_curves import accuracy_figure, curve_figure

STAGES = ["original", "head", "<layer 1>"]


def test_accuracy_figure_draws_the_means_their_band_and_the_two_chance_lines():
    accuracy = pd.DataFrame({"stage_index": [0, 1, 2], "mean": [0.9, 0.6, 0.5], "low": [0.85, 0.5, 0.4],
                             "high": [0.95, 0.7, 0.6]})
    figure = accuracy_figure(accuracy, STAGES, majority=0.55, num_labels=4)
    band, line = figure.data
    assert list(line.y) == [0.9, 0.6, 0.5] and list(line.x) == [0, 1, 2]
    assert list(band.y) == [0.95, 0.7, 0.6, 0.4, 0.5, 0.85]  # high left to right, then low right to left
    lines = sorted((shape.y0, shape.line.dash) for shape in figure.layout.shapes)
    assert lines == [(0.25, "dash"), (0.55, "dot")]  # uniform chance 1/4, majority class
    assert list(figure.layout.xaxis.ticktext) == STAGES


def test_interval_figure_error_bars_are_the_distance_to_each_bound():
    rows = pd.DataFrame({"method": ["saliency", "leave_one_out"], "mean": [0.4, -0.1], "low": [0.1, -0.3],
                         "high": [0.5, 0.2]})
    figure = interval_figure(rows, {"mean": 0.0, "low": -0.2, "high": 0.2}, emprt.METRIC.id)
    points = figure.data[-1]
    np.testing.assert_allclose(points.error_y.array, [0.1, 0.3])  # high - mean
    np.testing.assert_allclose(points.error_y.arrayminus, [0.3, 0.2])  # mean - low
    assert list(figure.layout.xaxis.ticktext) == ["Saliency (gradient)", "Leave-one-out"]
    assert [t.name for t in figure.data[:2]] == [f"{CHANCE}, 95 % range", CHANCE]
    assert len(interval_figure(rows, None, emprt.METRIC.id).data) == 1  # no band: the points alone


def test_curve_figure_shows_the_stages_by_name_and_no_chance_line_when_it_is_undefined():
    curves = pd.DataFrame([{"stage_index": i, "method": "saliency", "mean": 1.0 - 0.3 * i} for i in range(3)])
    figure = curve_figure(curves, STAGES, "top_k", chance={"mean": float("nan"), "low": 0.0, "high": 0.0})
    (line,) = figure.data
    assert list(line.text) == STAGES and list(line.y) == [1.0, 0.7, 0.4]
    assert figure.layout.yaxis.title.text == "top-k overlap"


def test_grid_rows_are_each_on_their_own_scale_and_every_word_is_escaped():
    words = ["<b>good</b>", "film", "&"]
    matrix = np.array([[2.0, -1.0, np.nan], [0.5, 0.25, 0.0], [np.nan, np.nan, np.nan]])
    page = grid_html(STAGES, words, matrix, signed=True, similarity=[1.0, 0.25, float("nan")])
    assert "<b>good</b>" not in page and "&lt;b&gt;good&lt;/b&gt;" in page and "&lt;layer 1&gt;" in page
    rows = re.findall(r"<tr>(.*?)</tr>", page)[1:]
    backgrounds = [re.findall(r"background:(rgba\([^)]*\))", row) for row in rows]
    # alpha = 0.08 + 0.72 |value| / the row's largest |value|: blue for, red against, none at 0
    assert backgrounds[0] == ["rgba(33,102,172,0.800)", "rgba(178,24,43,0.440)"]
    assert backgrounds[1] == ["rgba(33,102,172,0.800)", "rgba(33,102,172,0.440)", "rgba(0,0,0,0)"]
    assert rows[2].count("·</td>") == 3  # no score: a dot
    assert "original (+1.00)" in rows[0] and "head (+0.25)" in rows[1] and "(" not in rows[2].split("</td>")[0]
