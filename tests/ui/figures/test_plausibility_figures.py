"""The Plausibility page's figures drawn without Streamlit: paper 000's threshold sweep (one line per method, the
random baseline dotted, names escaped in the hover text) and an explanation's binarized rows."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from evaluation.metric import RANDOM_METHOD
from ui.figures.binarized_rows import binarized_rows_html
from ui.figures.plausibility_sweep import sweep_figure


def test_the_sweep_draws_one_line_per_method_the_random_one_dotted():
    curves = pd.DataFrame([{"method": m, "tau": tau, "f1": f1, "iou": f1 / 2}
                           for m, base in (("saliency", 0.6), (RANDOM_METHOD, 0.3))
                           for tau, f1 in ((0.2, base), (0.5, base - 0.1))])
    figure = sweep_figure(curves, "iou")
    saliency, random = figure.data
    assert saliency.name == "Saliency (gradient)" and list(saliency.y) == [0.3, 0.25]
    assert list(random.x) == [0.2, 0.5] and random.line.dash == "dot" and saliency.line.dash == "solid"
    assert figure.layout.yaxis.title.text == "iou (mean)"
    assert sweep_figure(curves).layout.yaxis.title.text == "f1 (of the averaged P and R)"


def test_binarized_rows_mark_the_top_k_and_the_words_over_tau():
    words = ["a", "<b>fine</b>", "film"]
    page = binarized_rows_html(words, np.array([0, 1, 1]), np.array([0, 0, 1]), k=2, tau=0.25,
                               human=[0, 1, 0])
    assert "top-k (k = 2)" in page and "threshold tau = 0.25" in page
    assert "<b>fine</b>" not in page and page.count("&lt;b&gt;fine&lt;/b&gt;") == 4  # title and text, two rows
    marked = [re.findall(r'title="([^"]*): \+1"', row) for row in page.split("xw-legend")[1:]]
    assert marked == [["&lt;b&gt;fine&lt;/b&gt;", "film"], ["film"]]
    assert page.count("xw-tok xw-human") == 2  # the human word underlined in both rows
