"""Figure and HTML builders as a reader meets them: method labels (never ids) in legends and tables, shaded bands
that are areas (no edge markers that read as data), the CI bands the reader picked, tables that scroll."""
from __future__ import annotations

import plotly.graph_objects as go
import pytest

from explainers import REGISTRY
from ui.figures.common import band_trace
from ui.figures.faithfulness import bias_matrix_html, dataset_curve_figure, input_curve_figure

METHODS = ["input_x_gradient", "leave_one_out", "lime:paper-000", "saliency", "attention", "integrated_gradients"]
X = [0.0, 0.25, 0.5, 0.75, 1.0]


def _bands(figure: go.Figure) -> list:
    return [t for t in figure.data if t.fill == "toself"]


def _lines(figure: go.Figure) -> list:
    return [t for t in figure.data if t.fill != "toself"]



def test_every_band_is_an_area_without_edge_markers():
    band = band_trace(X, [0] * 5, [1] * 5, "rgba(0,0,0,0.2)", "band")
    assert band.mode == "lines" and band.line.width == 0 and band.fill == "toself" and band.showlegend is False
    figure = dataset_curve_figure(_dataset_curves(METHODS[:2]), "Deletion")
    assert _bands(figure) and all(t.mode == "lines" and t.line.width == 0 for t in _bands(figure))
    figure = input_curve_figure(_input_curve(METHODS[:2]), "Comprehensiveness")
    assert [t.mode for t in _bands(figure)] == ["lines"]  # the random band


def _input_curve(methods: list[str]) -> dict:
    return {"metric": "comprehensiveness-eraser", "x": X,
            "methods": {m: [0.9 - 0.1 * i - 0.01 * k for i in range(5)] for k, m in enumerate(methods)},
            "summary": {m: 0.1 + 0.01 * k for k, m in enumerate(methods)},
            "random": {"mean": [0.8] * 5, "low": [0.7] * 5, "high": [0.9] * 5, "summary": 0.05}}


def _dataset_curves(methods: list[str]) -> dict:
    stats = {"mean": [0.5] * 5, "low": [0.4] * 5, "high": [0.6] * 5, "n": 20}
    return {"metric": "deletion-auc", "x": X, "methods": {m: dict(stats) for m in methods},
            "random": {"mean": [0.45] * 5, "low": [0.4] * 5, "high": [0.5] * 5, "orderings": 10}}


def test_legends_name_methods_by_their_labels():
    figure = input_curve_figure(_input_curve(METHODS), "Comprehensiveness")
    names = [t.name for t in _lines(figure)]
    assert names[0].startswith("random baseline")
    assert [n.split(" · ")[0] for n in names[1:]] == ["Input x Gradient", "Leave-one-out", "LIME (paper-000)",
                                                      "Saliency (gradient)", "Attention weights", "Integrated Gradients"]
    dataset = dataset_curve_figure(_dataset_curves(METHODS), "Deletion")
    for trace in _lines(dataset)[1:]:
        assert not any(trace.name.startswith(m) for m in REGISTRY), trace.name


def test_the_reader_picks_which_ci_bands_are_shaded():
    curves = _dataset_curves(METHODS)
    every = dataset_curve_figure(curves, "Deletion")
    assert len(_bands(every)) == len(METHODS) + 1  # six method bands and the random band
    picked = dataset_curve_figure(curves, "Deletion", bands=["leave_one_out"])
    assert [t.legendgroup for t in _bands(picked)] == ["random", "leave_one_out"]
    shaded = [t.name for t in _lines(picked) if "CI shaded" in t.name]
    assert shaded == ["Leave-one-out (n = 20, 95 % CI shaded)"]
    assert len(_lines(picked)) == len(METHODS) + 1  # every mean curve is still drawn
    assert len(_bands(dataset_curve_figure(curves, "Deletion", bands=[]))) == 1


def test_the_bias_matrix_names_methods_by_label_and_scrolls_when_wide():
    from evaluation.faithfulness.bias import bias_matrix

    matrix = bias_matrix(["leave_one_out", "input_x_gradient"], {"Deletion AUC (paper-000)": "delete"})
    page = bias_matrix_html(matrix, {})
    assert "Leave-one-out" in page and "Input x Gradient" in page
    assert ">leave_one_out<" not in page and ">input_x_gradient<" not in page
    assert page.startswith("<div style='overflow-x:auto'>") and page.endswith("</table></div>")


@pytest.mark.parametrize("signed, unsigned", [(True, True), (True, False), (False, True)])
def test_the_colour_legend_shows_the_scales_in_use(signed, unsigned):
    from ui.widgets.heatmap import legend_html

    legend = legend_html(signed=signed, unsigned=unsigned)
    assert ('<span class="xw-name">signed methods</span>' in legend) == signed
    assert ('<span class="xw-name">unsigned methods</span>' in legend) == unsigned


def test_sanity_and_roar_curves_label_methods_and_shade_only_the_picked_bands():
    import pandas as pd

    from ui.figures.roar_curves import curve_figure as roar_figure
    from ui.figures.sanity_curves import curve_figure as sanity_figure

    stages = pd.DataFrame([{"stage_index": i, "method": m, "mean": 0.5, "low": 0.4, "high": 0.6}
                           for m in ("saliency", "leave_one_out") for i in range(3)])
    figure = sanity_figure(stages, ["original", "head", "embeddings"], "spearman",
                           chance={"mean": 0.0, "low": -0.1, "high": 0.1}, bands=["saliency"])
    assert [t.name for t in _lines(figure)][1:] == ["Saliency (gradient)", "Leave-one-out"]
    assert [t.name for t in _bands(figure)] == ["random ranking (chance), 95 % range", "Saliency (gradient) CI"]
    assert all(t.mode == "lines" and t.line.width == 0 for t in _bands(figure))
    curves = pd.DataFrame([{"mode": "roar", "measure": m, "ratio": r, "mean": 0.8, "low": 0.7, "high": 0.9, "n": 3}
                           for m in ("ig", "random") for r in (0.0, 50.0, 100.0)])
    labels = {"ig": "Integrated Gradients (paper-001)", "random": "Random (ROAR baseline)"}
    roar = roar_figure(curves, "accuracy", None, labels, bands=["random"])
    assert [t.name for t in _lines(roar)] == list(labels.values())
    assert [t.legendgroup for t in _bands(roar)] == ["random"] and _bands(roar)[0].mode == "lines"
