"""The colour-blind-safe palette of the heatmaps: its colours come from the Okabe-Ito set, its two sides stay far
apart for every simulated colour-vision deficiency (where red-blue does not), it reaches every row and legend, and
the reader's choice is kept in the session."""
from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ui.figures.heatmap_png import cell_colour
from ui.widgets import heatmap
from ui.widgets.heatmap import PALETTES

OKABE_ITO = {"#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7", "#000000"}

# Machado, Oliveira & Fernandes 2009: simulation of full (severity 1.0) dichromacy on linear RGB
MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
APART = 60.0  # CIE76 ΔE between the two strongest cells; ~2.3 is just noticeable, 60 reads as "opposite"


def _linear(rgb) -> np.ndarray:
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb) -> np.ndarray:
    t = (SRGB_TO_XYZ @ np.clip(linear_rgb, 0, 1)) / (SRGB_TO_XYZ @ np.ones(3))
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _seen(rgb, deficiency: str) -> np.ndarray:
    """Lab of the strongest heatmap cell (alpha 0.8 over white) as a reader with ``deficiency`` sees it."""
    shown = 0.8 * np.asarray(rgb, dtype=np.float64) + 0.2 * 255
    return _lab(np.asarray(MACHADO[deficiency]) @ _linear(shown))


def _apart(a, b, deficiency: str) -> float:
    return float(np.linalg.norm(_seen(a, deficiency) - _seen(b, deficiency)))


def test_the_safe_palette_uses_okabe_ito_colours():
    safe = PALETTES["blue-orange"]
    for rgb in (safe.positive, safe.negative, safe.unsigned):
        assert "#{:02X}{:02X}{:02X}".format(*rgb) in OKABE_ITO


@pytest.mark.parametrize("deficiency", sorted(MACHADO))
def test_the_safe_palette_keeps_for_and_against_apart_for_every_deficiency(deficiency):
    safe = PALETTES["blue-orange"]
    assert _apart(safe.positive, safe.negative, deficiency) >= APART


def test_the_check_tells_an_unsafe_palette():
    """The same check fails red-green, and the default red-blue under protanopia: why the option exists."""
    assert _apart((178, 24, 43), (77, 146, 33), "deuteranopia") < APART
    default = PALETTES["red-blue"]
    assert _apart(default.positive, default.negative, "protanopia") < APART


def test_rows_and_legend_draw_with_the_palette_asked_for():
    safe = PALETTES["blue-orange"]
    row = heatmap.heatmap_html(["good", "bad"], np.array([1.0, -1.0]), signed=True, palette="blue-orange")
    assert "rgba(0,114,178,0.800)" in row and "rgba(213,94,0,0.800)" in row
    assert "rgba(33,102,172" not in row  # not the default blue
    legend = heatmap.legend_html(signed=True, unsigned=True, palette=safe)
    for rgb in (safe.positive, safe.negative, safe.unsigned):
        assert f"rgba({rgb[0]},{rgb[1]},{rgb[2]},0.8)" in legend


def test_outside_a_page_run_the_default_palette_draws():
    assert heatmap.active_palette() == PALETTES[heatmap.DEFAULT_PALETTE]
    assert heatmap.colour(1.0, 1.0, True) == "rgba(33,102,172,0.800)"


def _page_with_a_row():
    import numpy as np
    import streamlit as st

    from ui.widgets import heatmap

    heatmap.palette_picker()
    st.html(heatmap.heatmap_html(["good"], np.array([1.0]), signed=True) + heatmap.legend_html(True, False))


def test_the_choice_is_kept_in_the_session_and_reaches_rows_drawn_without_a_palette_argument():
    at = AppTest.from_function(_page_with_a_row).run()
    assert not at.exception, at.exception
    assert at.session_state["keep:palette"] == "red-blue"
    at.selectbox(key="palette").set_value("blue-orange").run()
    assert at.session_state["keep:palette"] == "blue-orange"
    shown = "".join(str(h.proto.body) for h in at.get("html"))
    assert "rgba(0,114,178,0.800)" in shown and "rgba(213,94,0,0.8)" in shown


def test_the_png_export_draws_in_the_palette_asked_for():
    for name, palette in PALETTES.items():
        for value, rgb in ((1.0, palette.positive), (-1.0, palette.negative)):
            colour = cell_colour(value, 1.0, True, palette=name)
            assert tuple(round(c * 255) for c in colour[:3]) == rgb and colour[3] == pytest.approx(0.80)
        assert tuple(round(c * 255) for c in cell_colour(0.5, 1.0, False, palette=name)[:3]) == palette.unsigned
