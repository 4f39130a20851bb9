"""The sidebar's contrast class reaches the Heatmaps page's methods: every row explains "the target rather
than the contrast class", says so in its provenance line, and equals the difference of the two classes' LOO."""
from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.integration

from conftest import ROOT


def test_heatmaps_explain_the_target_rather_than_the_contrast(quick_classifier):
    from streamlit.testing.v1 import AppTest

    from explainers import cache, create

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_MODEL", "default-quick")
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        cache.DEFAULT_CACHE.clear()
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
        at.session_state["keep:example_index"] = 2
        at.session_state["keep:methods"] = ["leave_one_out"]
        at.session_state["keep:target-default-quick"] = 1
        at.session_state["keep:contrast-default-quick"] = 0
        at.run()
        at.switch_page("app_pages/1_Heatmaps.py")
        at.run()
        assert not at.exception, at.exception
        shown = " ".join(str(getattr(e, "value", "")) for e in at.main) + " ".join(
            str(getattr(e, "body", "")) for e in at.markdown)
        assert "Rather than: **negative**" in shown
        entries = list(cache.DEFAULT_CACHE._items.values())  # what the page computed, in memory
        cache.DEFAULT_CACHE.clear()
    (explanation,) = [e for e in entries if e.method_id == "leave_one_out"]
    assert explanation.provenance["target"]["contrast"]["index"] == 0 and explanation.target == 1
    encoding = quick_classifier.encode(" ".join(explanation.words))
    a = create("leave_one_out").explain(quick_classifier, encoding, 1).word_scores
    b = create("leave_one_out").explain(quick_classifier, encoding, 0).word_scores
    np.testing.assert_allclose(explanation.word_scores, a - b, rtol=1e-6, atol=1e-9)


def test_faithfulness_page_measures_the_contrast_it_explains(quick_classifier, tmp_path, monkeypatch):
    """With the sidebar's contrast, the page's curves read p(target) - p(contrast) (checked against the engine), and
    the normalized measures (NAOPC, soft) are measured on the same difference and say so."""
    from streamlit.testing.v1 import AppTest

    from evaluation.faithfulness.curves import RemovalOptions, evaluate_orders
    from evaluation.faithfulness.presets import BY_ID
    from explainers import create
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(models_dir(), target_is_directory=True)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["keep:example_index"] = 2
    at.session_state["keep:target-default-quick"] = 1
    at.session_state["keep:contrast-default-quick"] = 0
    at.run()
    at.switch_page("app_pages/2_Faithfulness.py")
    at.session_state["faith-methods"] = ["leave_one_out"]
    at.session_state["faith-metrics"] = ["eraser"]
    at.run()
    assert not at.exception, at.exception
    assert any("Contrast class 0" in c.value for c in at.caption)
    at.multiselect(key="faith-measures").set_value(["soft"]).run()
    assert not at.exception, at.exception
    assert any("these measures read p(target) - p(contrast)" in c.value for c in at.caption)
    assert any("Soft normalized comprehensiveness" in str(row) for df in at.dataframe for row in df.value.index)
    table = next(df.value for df in at.dataframe if "Comprehensiveness (AOPC) ↑" in df.value.index)
    text = "not bad at all , actually ."
    encoding = quick_classifier.encode(text)
    explanation = create("leave_one_out", contrast=0).explain(quick_classifier, encoding, 1)
    order = np.argsort(-explanation.word_scores, kind="stable")
    (direct,) = evaluate_orders(quick_classifier, encoding, [BY_ID["comprehensiveness-eraser"]], order[None],
                                RemovalOptions(target=1, contrast=0), explanation=explanation)
    shown = [c for c in table.columns if "Leave-one-out" in c][0]
    assert table.loc["Comprehensiveness (AOPC) ↑", shown].startswith(f"{direct.values['comprehensiveness-eraser']:.3f}")


def test_a_shared_link_carries_the_contrast_class(quick_classifier, monkeypatch):
    from urllib.parse import parse_qsl, urlsplit

    from streamlit.testing.v1 import AppTest

    from explainers import cache

    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(cache.DEFAULT_CACHE, "directory", None)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.query_params.update({"model": "default-quick", "target": "1", "contrast": "0", "methods": "random"})
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="contrast-default-quick").value == 0
    (block,) = [c for c in at.sidebar.code]
    assert dict(parse_qsl(urlsplit(block.value).query))["contrast"] == "0"
    bad = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    bad.query_params.update({"model": "default-quick", "contrast": "9"})
    bad.run()
    assert not bad.exception, bad.exception
    assert "no contrast class" in " ".join(w.value for w in [*bad.warning, *bad.sidebar.warning])
    assert bad.selectbox(key="contrast-default-quick").value is None
