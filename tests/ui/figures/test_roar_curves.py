"""ROAR's figures drawn without Streamlit: ROAR and Recursive ROAR side by side with the 100 %-masked floor, and a
masked test sentence with its masked words as chips (escaped)."""
from __future__ import annotations

import pandas as pd

from explainers import label_for
from ui.figures.masked_words import CHIP, masked_html
from ui.figures.roar_curves import MODE_TITLES, curve_figure


def _curves(modes: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame([{"mode": mode, "measure": m, "ratio": r, "mean": 0.9 - r / 200, "low": 0.8, "high": 0.95,
                          "n": 3} for mode in modes for m in ("ig", "random") for r in (10.0, 50.0, 90.0)])


def test_one_panel_per_mode_present_each_with_the_floor():
    figure = curve_figure(_curves(("roar", "recursive")), "accuracy", floor=0.5, labels={"ig": "IG"})
    assert [a.text for a in figure.layout.annotations if a.text in MODE_TITLES.values()] == list(MODE_TITLES.values())
    assert [shape.y0 for shape in figure.layout.shapes] == [0.5, 0.5]
    lines = [t for t in figure.data if t.fill != "toself"]
    assert [t.name for t in lines if t.showlegend] == ["IG", label_for("random")]  # the legend once: first panel
    assert list(lines[0].y) == [0.85, 0.65, 0.45]  # sorted by ratio
    assert [t.line.dash for t in lines[:2]] == ["solid", "dash"]  # the random baseline dashed
    one = curve_figure(_curves(("recursive",)), "accuracy", floor=None, in_words=True)
    assert [a.text for a in one.layout.annotations] == [MODE_TITLES["recursive"]] and not one.layout.shapes
    assert one.layout.xaxis.title.text == "words masked"


def test_masked_words_are_chips_and_every_word_is_escaped():
    page = masked_html(["a", "<i>great</i>", "film"], [False, True, False])
    assert page == f"a <span style='{CHIP}'>&lt;i&gt;great&lt;/i&gt;</span> film"
