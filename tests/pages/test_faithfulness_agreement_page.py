"""The Faithfulness page's dataset tab with the agreement group, AppTest on the real quick model: a run
started from the page shows the pair table (mean, CI, random band; numbers equal to evaluation/'s summary) and the
matrix of mean agreement, while the method x metric table keeps one row per method."""
from __future__ import annotations

import json

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/2_Faithfulness.py"
TEXT = "a gorgeous , witty film that drags badly in its final act"
METHODS = ["saliency", "leave_one_out", "input_x_gradient"]


@pytest.fixture()
def page_cache(tmp_path, monkeypatch):
    """An isolated cache (and result store) that still sees the prepared models."""
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(models_dir(), target_is_directory=True)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    return cache


def test_an_agreement_run_shows_the_pair_table_and_the_matrix(monkeypatch, quick_classifier, page_cache):
    from evaluation.agreement import dataset as agreement_dataset
    from evaluation.runs.jobs import JOBS
    from evaluation.runs.store import ResultStore
    from evaluation.suite.run_report import run_table
    from explainers import label_for
    from ui.views.faithfulness import RUN_KEY

    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page(PAGE)
    at.session_state["faith-methods"] = METHODS
    at.session_state["faith-metrics"] = []
    at.session_state["faith-extra"] = ["agreement"]
    at.run()
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(TEXT).run()
    assert not at.exception, at.exception
    at.number_input(key="faith-limit").set_value(3).run()
    at.button(key="faith-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    run_id = at.session_state[RUN_KEY]
    JOBS.wait(run_id, timeout=240)
    at.run()
    assert not at.exception, at.exception
    # the method x metric table: one row per method (its mean over partners) and the random baseline, no pairs
    main = next(df.value for df in at.dataframe if "Agreement: Pearson's r ↑" in df.value.columns)
    ran = ResultStore().get_run(run_id)["config"]["methods"]  # the page's order of the chosen methods
    assert sorted(ran) == sorted(METHODS)
    assert list(main.index) == [label_for(m) for m in ran] + ["random baseline"]
    # the pair table of the first measure (Pearson), equal to the run's summary
    shown = next(df.value for df in at.dataframe if "method A" in df.value.columns)
    expected = agreement_dataset.pair_rows(agreement_dataset.pair_table(run_table(ResultStore(), run_id)), "pearson")
    assert list(shown["method A"]) == [label_for(m) for m in expected["method A"]]
    assert shown["mean"].tolist() == pytest.approx(expected["mean"].tolist(), rel=1e-12)
    assert {"CI low", "CI high", "random mean", "band low", "band high", "vs random"} <= set(shown.columns)
    assert shown["random mean"].notna().all() and len(shown) == 3
    assert any("Random band" in c.value and "two independent random attributions" in c.value for c in at.caption)
    matrices = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    heatmap = next(c for c in matrices if c["layout"].get("title", {}).get("text", "").startswith("Mean Pearson"))
    assert heatmap["data"][0]["x"] == [label_for(m) for m in ran]
    # another measure: the top-k ones name their k
    at.selectbox(key=f"faith-agreement-measure-{run_id}").set_value("feature").run()
    assert not at.exception, at.exception
    assert any("k = 5" in c.value for c in at.caption)


def test_a_run_of_agreement_alone_is_listed_on_the_page():
    from ui.views.faithfulness import _is_faithfulness

    assert _is_faithfulness({"config": {"evaluators": ["agreement"]}})
