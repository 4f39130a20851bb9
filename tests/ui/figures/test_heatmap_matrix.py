"""The compact matrix view: one row per method, one column per word, each row scaled to its own largest |score|
on one colour scale with one colour bar; escaped labels; slide-sized; PNG / SVG export from the toolbar."""
from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest

from explainers import create
from ui.figures.heatmap_matrix import SLIDE_HEIGHT, SLIDE_WIDTH, export_config, heatmap_matrix
from ui.widgets.heatmap import PALETTES

TEXT = "the <b>movie</b> was excellent & long"


@pytest.fixture(scope="module")
def explained(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    return {m: create(m).explain(keyword_classifier, encoding, None)
            for m in ("saliency", "input_x_gradient", "leave_one_out", "attention")}


def _trace(figure: go.Figure) -> go.Heatmap:
    (trace,) = figure.data  # one trace: one colour scale, one legend
    return trace


def test_signed_rows_share_one_diverging_scale_each_row_scaled_to_its_largest_score(explained):
    rows = [explained["input_x_gradient"], explained["leave_one_out"]]
    trace = _trace(heatmap_matrix(rows, palette="red-blue"))
    z = np.asarray(trace.z)
    for r, e in enumerate(rows):
        expected = e.word_scores / np.abs(e.word_scores).max()
        np.testing.assert_allclose(z[r], expected, rtol=1e-6)  # float32 scores divided by their own max
    assert (trace.zmin, trace.zmax) == (-1.0, 1.0)
    assert trace.colorscale[0][1] == "rgb(178,24,43)" and trace.colorscale[-1][1] == "rgb(33,102,172)"
    assert trace.showscale is not False and list(trace.colorbar.ticktext) == ["against", "0", "for the target"]


def test_an_unsigned_row_puts_every_row_on_the_absolute_scale(explained):
    rows = [explained["input_x_gradient"], explained["attention"]]
    assert not explained["attention"].signed
    trace = _trace(heatmap_matrix(rows, palette="blue-orange"))
    z = np.asarray(trace.z)
    first = np.abs(rows[0].word_scores)
    np.testing.assert_allclose(z[0], first / first.max(), rtol=1e-6)
    assert z.min() >= 0 and (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert trace.colorscale[-1][1] == "rgb({},{},{})".format(*PALETTES["blue-orange"].unsigned)


def test_labels_are_methods_and_escaped_words(explained):
    figure = heatmap_matrix(list(explained.values()))
    trace = _trace(figure)
    assert list(trace.y) == [e.method_label for e in explained.values()]
    ticks = list(figure.layout.xaxis.ticktext)
    assert ticks == [w.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
                     for w in explained["saliency"].words]
    assert not any("<b>" in t for t in ticks)


def test_the_figure_fits_a_slide(explained):
    figure = heatmap_matrix(list(explained.values()) * 6)  # 24 rows still fit
    assert figure.layout.width <= SLIDE_WIDTH and figure.layout.height <= SLIDE_HEIGHT


def test_explanations_of_different_inputs_are_refused(explained, keyword_classifier):
    other = create("saliency").explain(keyword_classifier, keyword_classifier.encode("a long film"), None)
    with pytest.raises(ValueError, match="different inputs"):
        heatmap_matrix([explained["saliency"], other])


@pytest.mark.parametrize("image_format", ["png", "svg"])
def test_the_toolbar_exports_png_and_svg(image_format):
    assert export_config(image_format)["toImageButtonOptions"]["format"] == image_format
    with pytest.raises(ValueError):
        export_config("gif")
