"""The ROAR page with AppTest: a stored study's curves, scores and job list; the cost estimate before a study
starts; starting a small study on the real quick model in the background; the empty state."""
from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from conftest import ROOT
from roar_fixtures import save_keyword_model, tiny_study_kwargs, write_keyword_csv
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration
PAGE = "app_pages/4_ROAR.py"


@pytest.fixture()
def app_cache(tmp_path, monkeypatch, quick_classifier):
    """An isolated cache that still sees the prepared models, and an isolated explanation disk cache."""
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    real = models_dir()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    return cache


def _open() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"]  # the first page stays cheap
    at.run()
    assert not at.exception, at.exception
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def _table(at, column: str):
    """The first dataframe on the page with this column (AppTest does not find dataframes by key)."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _values(data) -> list[float]:
    if isinstance(data, dict):  # plotly's typed array
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"])).tolist()
    return list(data)


def _chart(at) -> dict:
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        if any(t.get("name") == "Random (ROAR baseline)" for t in spec["data"]):
            return spec
    raise AssertionError("no ROAR curve chart on the page")


@pytest.fixture()
def tiny_study(app_cache, tmp_path, keyword_classifier):
    from evaluation.roar.study import build_config, run_study
    from evaluation.runs.store import ResultStore

    folder = save_keyword_model(keyword_classifier, tmp_path / "model")
    write_keyword_csv(tmp_path / "train.csv", 60, seed=1)
    write_keyword_csv(tmp_path / "test.csv", 30, seed=2)
    from evaluation.roar.training import Variant

    config = build_config(**tiny_study_kwargs(folder, tmp_path, measures=["loo"], ratios=[20, 50], seeds=[0, 1],
                                              mode="both", variant=Variant(train_size=60, test_size=30, epochs=1)))
    store, summary = run_study(config, ResultStore())
    assert summary.status == "finished"
    return store, summary.run_id, config


def test_a_stored_study_shows_curves_scores_and_its_job(tiny_study):
    from evaluation.roar import scores as roar_scores
    from evaluation.roar.measures import Measure

    store, run_id, config = tiny_study
    at = _open()
    # the study is of another model than the one in use: listed on request only
    assert any("No ROAR studies of this model yet" in c.value for c in at.caption)
    at.toggle(key="roar-show-all").set_value(True).run()
    assert not at.exception, at.exception
    loo = Measure.from_dict(config.measures[0]).label()  # legends and tables name measures by their labels
    random = "Random (ROAR baseline)"
    jobs = _table(at, "time left")
    # anchors 2 x 2 seeds + (loo, random) x 2 ratios x 2 seeds + recursive loo 2 x 2
    assert jobs.loc[jobs["id"] == run_id, "cells"].iloc[0] == "16/16"
    spec = _chart(at)
    traces = {(t["name"], t.get("xaxis", "x")) for t in spec["data"] if t.get("mode") == "lines+markers"}
    assert {(loo, "x"), (random, "x"), (loo, "x2"), (random, "x2")} <= traces  # ROAR | Recursive ROAR
    assert all(t.get("mode") == "lines" for t in spec["data"] if t.get("fill") == "toself")  # bands: no markers
    frame = roar_scores.cells_frame(store.cells(run_id))
    curves = roar_scores.curves(frame)
    expected = curves[(curves["mode"] == "roar") & (curves["measure"] == "loo")].sort_values("ratio")["mean"]
    line = next(t for t in spec["data"] if t["name"] == loo and t.get("xaxis", "x") == "x"
                and t.get("mode") == "lines+markers")
    assert _values(line["y"]) == pytest.approx(list(expected))
    assert _values(line["x"]) == [0.0, 20.0, 50.0, 100.0]
    scores = _table(at, "score (%)")
    row = scores[(scores["mode"] == "roar") & (scores["measure"] == loo)].iloc[0]
    expected_score = roar_scores.summary(frame).set_index(["mode", "measure"]).loc[("roar", "loo"), "score"]
    assert row["score (%)"] == pytest.approx(round(expected_score * 100, 1))
    captions = " ".join(c.value for c in at.caption)
    assert "operator **mask**" in captions and "frozen encoder, trained head" in captions
    assert any("100 %-masked floor" in c.value for c in at.caption)


def test_the_cost_is_shown_before_a_small_study_starts_and_then_runs(app_cache):
    from evaluation.runs.jobs import JOBS

    at = _open()
    markdown = " ".join(m.value for m in at.markdown)
    assert "Cost before starting:" in markdown and "retrains" in markdown
    # the small study: attention only, 50 %, 1 seed, 24 / 16 sentences, 1 epoch
    at.multiselect(key="roar-measures-(choose below)").set_value(["attention"])
    at.selectbox(key="roar-ratios-(choose below)").set_value("custom")
    at.text_input(key="roar-ratios-custom").set_value("50")
    at.number_input(key="roar-seeds-(choose below)").set_value(1)
    at.number_input(key="roar-variant-(choose below)-train_size").set_value(24)
    at.number_input(key="roar-variant-(choose below)-test_size").set_value(16)
    at.number_input(key="roar-variant-(choose below)-epochs").set_value(1.0)
    # options that only the schema draws (no UI code of their own) reach the study that runs
    at.number_input(key="roar-variant-(choose below)-batch_size").set_value(8)
    at.number_input(key="roar-(choose below)-data_seed").set_value(2)
    next(b for b in at.button if b.label.startswith("Apply settings")).click().run()
    assert not at.exception, at.exception
    markdown = " ".join(m.value for m in at.markdown)
    assert "Cost before starting: 4 retrains" in markdown  # anchors 2 + (attention, random) x 1 ratio x 1 seed
    at.button(key="roar-start").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state["roar:run"]
    JOBS.wait(run_id, timeout=300)
    at.run()
    assert not at.exception, at.exception
    jobs = _table(at, "time left")
    assert jobs.loc[jobs["id"] == run_id, "cells"].iloc[0] == "4/4"
    assert "finished" in jobs.loc[jobs["id"] == run_id, "status"].iloc[0]
    scores = _table(at, "score (%)")
    assert list(scores["measure"]) == ["Attention weights"] and np.isfinite(scores["score (%)"].iloc[0])
    from evaluation.runs.store import ResultStore

    study = ResultStore().get_run(run_id)["config"]
    assert study["variant"]["batch_size"] == 8 and study["data_seed"] == 2 and study["variant"]["epochs"] == 1.0


def test_an_empty_store_says_how_to_begin(app_cache):
    at = _open()
    assert any("No ROAR studies yet" in c.value for c in at.caption)
    assert not at.error
    assert "About ROAR" in [p.proto.popover.label for p in at.get("popover")]  # its method card


def test_the_synthetic_tab_draws_paper_001_fig_3_and_checks_its_statements(app_cache):
    from evaluation.roar.synthetic import STRATEGIES, synthetic_study

    at = _open()
    specs = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]
    figure = next(s for s in specs if any(t.get("name") == STRATEGIES["recursive"] for t in s["data"]))
    study = synthetic_study(tuple(range(5)))  # the tab's default: 5 drawn problems
    for strategy, label in STRATEGIES.items():
        trace = next(t for t in figure["data"] if t["name"] == label)
        assert _values(trace["y"]) == pytest.approx(study["curves"][strategy], abs=1e-12)
    checks = _table(at, "paper 001 says")
    assert list(checks["ours"]) == [f"holds on {c['holds_on']} of 5 seeds" for c in study["checks"]]


def test_the_one_token_presets_on_the_page_quick_and_paper_protocol(app_cache):
    """Paper 001 App. F in the UI: the quick preset's one-word steps (1..10 words, recursive, no anchors:
    (3 measures of Table 2's RoBERTa column + random) x 10 steps x 5 seeds retrains), and the paper-named preset's
    whole-model protocol."""
    at = _open()
    at.selectbox(key="roar-preset").set_value("paper-001-one-token-quick")  # a form: applied on submit
    next(b for b in at.button if b.label.startswith("Apply settings")).click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="roar-ratios-paper-001-one-token-quick").value.startswith("paper 001 App. F")
    markdown = " ".join(m.value for m in at.markdown)
    assert "Cost before starting: 200 retrains" in markdown
    captions = " ".join(c.value for c in at.caption)
    assert "variant: " in captions and "every train / every test" not in captions
    at.selectbox(key="roar-preset").set_value("paper-001-one-token")
    next(b for b in at.button if b.label.startswith("Apply settings")).click().run()
    assert not at.exception, at.exception
    assert "every train / every test" in " ".join(c.value for c in at.caption)
