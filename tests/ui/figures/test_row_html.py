"""The HTML around heatmap rows drawn without Streamlit: a row's title with its badge, captioned rows of one method
under several models (sanity checks, the Guided tour, model comparison) and the tour's input line. Every text from a
method, a model or a user is escaped."""
from __future__ import annotations

import numpy as np

from explainers import Explanation
from ui.figures.heatmap_html import explanation_row_html
from ui.figures.labelled_rows import labelled_rows_html, titled_row_html
from ui.figures.row_header import row_header, row_title
from ui.figures.tour_input import input_html


def _explanation(label: str = "Saliency <gradient>", badge: str | None = None, words=("a", "<b>film</b>")):
    provenance = {"details": {"badge": badge}} if badge else {}
    return Explanation("saliency", label, "gradient", True, tuple(words), tuple(range(len(words))), tuple(words),
                       (0,) * len(words), np.linspace(-1, 1, len(words)), None, 1, "positive", provenance)


def test_a_row_title_escapes_the_label_and_shows_the_badge_of_a_tuned_method():
    assert row_title(_explanation()) == "Saliency &lt;gradient&gt;"
    tuned = row_title(_explanation("AML", badge="tuned for <AOPC>"))
    assert tuned.startswith("AML <span class='xw-badge'") and tuned.endswith(">tuned for &lt;AOPC&gt;</span>")
    assert row_header("**x**", "0.10 s <1 pass>").endswith(">0.10 s &lt;1 pass&gt;</span>")


def test_captioned_rows_keep_their_order_and_escape_each_caption():
    original, randomized = _explanation(), _explanation(words=("b", "c"))
    page = labelled_rows_html([("original", original), ("randomized: <head>", randomized)], "word")
    assert page.index("original") < page.index("randomized: &lt;head&gt;") and "<head>" not in page
    assert page.endswith(explanation_row_html(randomized, "word"))
    assert explanation_row_html(original, "word") in page
    drawn = labelled_rows_html([("x", original)], "word", draw=lambda e, level: f"[{e.words[0]}|{level}]")
    assert drawn.endswith("[a|word]")
    titled = titled_row_html("<model>", "explains positive & more", original, "word")
    assert titled.startswith("<div><b>&lt;model&gt;</b> · explains positive &amp; more</div>")


def test_the_tour_input_escapes_both_segments():
    page = input_html("<i>fine</i> & good", "a <pair>")
    assert "&lt;i&gt;fine&lt;/i&gt; &amp; good" in page and "a &lt;pair&gt;" in page and "<i>" not in page
    assert "&#8214;" in page and "&#8214;" not in input_html("just one")
