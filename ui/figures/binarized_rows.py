"""The Plausibility page's binarized heatmaps of one explanation: its top-k words and its words over the threshold
tau, each as a row with the human rationale underlined (paper 000's two binarizations). Every word is escaped by
``heatmap_html``."""
from __future__ import annotations

import numpy as np

from ui.figures.heatmap_html import heatmap_html


def binarized_rows_html(words: list[str], top_k: np.ndarray, threshold: np.ndarray, k: int, tau: float,
                        segments: list[int] | None = None, human: list[int] | None = None) -> str:
    """``top_k`` and ``threshold``: 0/1 per word (the binarized masks)."""
    return (f"<div class='xw-legend'>top-k (k = {k:d})</div>"
            + heatmap_html(words, top_k.astype(float), False, segments=segments, human=human)
            + f"<div class='xw-legend'>threshold tau = {tau:g}</div>"
            + heatmap_html(words, threshold.astype(float), False, segments=segments, human=human))
