"""The Heatmaps page with AppTest on the real quick model: the colour legend sits above the rows and explains
every scale the rows use (signed blue/red and unsigned purple)."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT

pytestmark = pytest.mark.integration


def test_the_legend_is_above_the_rows_and_shows_both_scales_in_use(monkeypatch, quick_classifier):
    from explainers import create

    methods = ["saliency", "leave_one_out"]
    assert {create(m).is_signed() for m in methods} == {True, False}  # one unsigned (purple), one signed row
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["methods"] = methods
    at.run()
    assert not at.exception, at.exception
    blocks = [element.proto.body for element in at.get("html")]
    legend = next(i for i, b in enumerate(blocks) if 'class="xw-legend"' in b)
    first_row = next(i for i, b in enumerate(blocks) if 'class="xw-row"' in b)
    assert legend < first_row  # next to the heatmaps, not once at the bottom of the page
    assert "<b>signed methods</b>" in blocks[legend] and "<b>unsigned methods</b>" in blocks[legend]
