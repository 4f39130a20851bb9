"""The Heatmaps page with AppTest on the real quick model, as a reader meets it: the colour legend sits above the
rows and explains every scale the rows use (signed blue/red and unsigned purple); an agreement that cannot be
computed reads "n/a" with the reason, not None."""
from __future__ import annotations

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

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
    assert '<span class="xw-name">signed methods</span>' in blocks[legend]
    assert '<span class="xw-name">unsigned methods</span>' in blocks[legend]


def test_an_agreement_without_a_ranking_reads_n_a_with_the_reason(monkeypatch, quick_classifier):
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["methods"] = ["saliency", "leave_one_out"]
    at.run()
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input("wonderful").run()  # one word: no ranking, no rank correlation
    assert not at.exception, at.exception
    at.session_state["agreement-values-open"] = True  # the values table is drawn only while its panel is open
    at.run()
    assert not at.exception, at.exception
    table = next(d for d in at.dataframe if "method" in d.value.columns and len(d.value) == 2
                 and d.value.shape[1] == 3)
    assert table.value.drop(columns="method").isna().all().all()  # one word ranks nothing
    assert table.proto.placeholder == "n/a"
    assert any(c.value.startswith("n/a: a method gave every word the same score") for c in at.caption)
