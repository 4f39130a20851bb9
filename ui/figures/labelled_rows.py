"""One method's heatmap rows under several models, each under a small caption: the original model and a randomized
stage, the trained model and its randomized heads (paper 000 s. 3.3), a model among those compared. The captions
and every word are escaped."""
from __future__ import annotations

import html
from collections.abc import Callable

from explainers import Explanation
from ui.figures.heatmap_html import explanation_row_html

CAPTION = "font-size:12px;color:#666"


def labelled_rows_html(rows: list[tuple[str, Explanation]], level: str,
                       draw: Callable[[Explanation, str], str] = explanation_row_html) -> str:
    """``rows``: (caption, explanation) in the order shown; ``draw(explanation, level)`` draws one row (the Guided
    tour passes its own, which draws a long document whole)."""
    return "".join(f"<div style='{CAPTION}'>{html.escape(caption)}</div>" + draw(explanation, level)
                   for caption, explanation in rows)


def titled_row_html(title: str, note: str, explanation: Explanation, level: str) -> str:
    """A row under a bold title and a note (the model compared and the class it explains)."""
    return (f"<div><b>{html.escape(title)}</b> · {html.escape(note)}</div>"
            + explanation_row_html(explanation, level))
