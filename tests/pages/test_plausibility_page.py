"""The Plausibility page with AppTest on the real quick model: per example and per dataset, bad input."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from explainers import label_for

pytestmark = pytest.mark.integration

METHODS = ["saliency", "leave_one_out", "random"]


@pytest.fixture(scope="module")
def app(quick_classifier, tmp_path_factory):
    """One app for the module, with a fresh cache (the prepared models are linked in, not copied)."""
    cache = tmp_path_factory.mktemp("plausibility-cache")
    (cache / "models").symlink_to(Path(quick_classifier.source).parent, target_is_directory=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(cache))
        patch.setenv("EXWB_MODEL", "default-quick")
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
        at.run()
        at.switch_page("app_pages/5_Plausibility.py")
        at.run()
        assert not at.exception, at.exception
        at.multiselect(key="plaus-methods").set_value(METHODS).run()
        yield at


def _html(at) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def _frame(at, columns: str):
    return next(d.value for d in at.dataframe if columns in " ".join(map(str, d.value.columns)))


def test_dataset_example_draws_the_human_rationale_and_scores(app):
    app.radio(key="input_source").set_value("Dataset").run()
    app.selectbox(key="dataset_name").set_value("sst-rationales").run()
    assert not app.exception, app.exception
    assert [t.value for t in app.title] == ["Plausibility"]
    assert any("not faithfulness" in i.value for i in app.info)
    html = _html(app)
    # "It 's a lovely film with lovely performances ..." : the two "lovely" are the human words; each method has
    # three rows (heatmap, top-k, threshold), each underlining both
    assert html.count('class="xw-tok xw-human"') == 2 * 3 * len(METHODS)
    table = _frame(app, "Token F1 @ top-k")
    assert set(table["method"]) == {"Saliency (gradient)", "Leave-one-out", "Random (baseline)"}
    assert ((table["Human coverage ↓"] - 2 / 13).abs() < 1e-9).all()
    assert table["Mean rank of the human words ↓"].between(2, 13).all()
    assert table["AUPRC (average precision) ↑"].between(0, 1).all()
    assert len(app.get("download_button")) >= 2
    # deterministic methods have no seed: "n/a" with the reason, not a raw None
    shown = next(d for d in app.dataframe if "Token F1 @ top-k" in " ".join(map(str, d.value.columns)))
    assert shown.proto.placeholder == "n/a" and table["seed"].isna().any()
    assert any(c.value == "n/a: no seed: the method is deterministic" for c in app.caption)


def test_typed_text_without_rationale_can_be_marked(app):
    app.radio(key="input_source").set_value("Your text").run()
    app.text_area(key="text").input("a gorgeous and moving film").run()
    assert any("No human rationale" in i.value for i in app.info)
    marker = next(m for m in app.multiselect if m.key and m.key.startswith("plaus-human-"))
    marker.set_value([1]).run()  # "gorgeous"
    assert not app.exception, app.exception
    table = _frame(app, "Token F1 @ top-k")
    assert (table["Human coverage ↓"] == 0.2).all() and len(table) == len(METHODS)
    # a bad setting gets a message, not a traceback
    app.text_input(key="plaus-default-top_k").input("lots").run()
    assert not app.exception and any("top_k" in e.value for e in app.error)
    app.text_input(key="plaus-default-top_k").input("20%").run()


def test_dataset_run_with_progress_table_sweep_and_export(app):
    from evaluation.runs.jobs import JOBS

    app.multiselect(key="plaus-methods").set_value(["saliency"]).run()
    app.selectbox(key="plaus-ds").set_value("sst-rationales").run()
    app.number_input(key="plaus-limit").set_value(2).run()
    app.button(key="plaus-start").click().run()
    assert not app.exception and not app.error, (app.exception, [e.value for e in app.error])
    run_id = app.session_state["plausibility_run"]
    JOBS.wait(run_id, 240)
    app.run()
    assert not app.exception, app.exception
    wide = next(d.value for d in app.dataframe if d.value.index.name == "method")  # the method x metric table
    assert list(wide.index) == [label_for("saliency"), "random baseline"]  # labels, not ids
    assert all("[" in cell for cell in wide.iloc[0])  # mean [low, high]
    best = _frame(app, "best_tau")
    assert set(best["method"]) == {label_for("saliency"), "random baseline"}
    assert best["best_tau"].between(0.05, 0.95).all()
    assert (best["f1_low"] <= best["f1"] + 1e-12).all() and (best["f1"] <= best["f1_high"] + 1e-12).all()
    chart = json.loads(app.get("plotly_chart")[-1].proto.spec)
    assert len(chart["data"]) == 2 and all(len(trace["x"]) == 19 for trace in chart["data"])
    assert any("2 of 2 examples" in p.proto.text for p in app.get("progress"))
    labels = [b.proto.label for b in app.get("download_button")]
    assert "Everything (JSON)" in labels and "Per-example values (CSV)" in labels
    # bad input: a file that does not exist
    app.selectbox(key="plaus-ds").set_value("file: a CSV/JSONL path").run()
    app.text_input(key="plaus-file").input("/nonexistent/rationales.jsonl").run()
    assert not app.exception and any("No file at /nonexistent/rationales.jsonl" in e.value for e in app.error)
    assert app.button(key="plaus-start").disabled  # checked before any job starts


def test_a_started_run_is_the_run_shown(app):
    """after Start the 'Show run' box kept the previously shown run; the started run is shown now."""
    from evaluation.runs.jobs import JOBS

    app.multiselect(key="plaus-methods").set_value(["saliency"]).run()
    app.selectbox(key="plaus-ds").set_value("sst-rationales").run()
    app.number_input(key="plaus-limit").set_value(1).run()
    app.button(key="plaus-start").click().run()
    first = app.session_state["plausibility_run"]
    JOBS.wait(first, 240)
    app.run()
    assert app.selectbox(key="plaus-show-run").value == first
    app.number_input(key="plaus-limit").set_value(3).run()
    app.button(key="plaus-start").click().run()
    assert not app.exception and not app.error, (app.exception, [e.value for e in app.error])
    second = app.session_state["plausibility_run"]
    try:
        assert second != first and app.selectbox(key="plaus-show-run").value == second
        assert any(" of 3 examples" in p.proto.text for p in app.get("progress"))
    finally:
        JOBS.wait(second, 240)


def test_top_p_binarization_is_chosen_on_the_page_and_reaches_the_scores(app):
    """Paper 002's top-p %, an option of the config's schema: chosen through its widget, the dataset run's table
    shows the top-p token scores (those of the run's report) in place of the top-k ones."""
    from evaluation.plausibility.dataset import run_report
    from evaluation.runs.jobs import JOBS
    from evaluation.runs.store import ResultStore

    app.multiselect(key="plaus-methods").set_value(["leave_one_out"]).run()
    app.selectbox(key="plaus-ds").set_value("sst-rationales").run()
    app.number_input(key="plaus-limit").set_value(4).run()
    app.selectbox(key="plaus-default-binarization").set_value("top-p").run()
    app.button(key="plaus-start").click().run()
    assert not app.exception and not app.error, (app.exception, [e.value for e in app.error])
    run_id = app.session_state["plausibility_run"]
    try:
        JOBS.wait(run_id, 240)
        app.run()
        assert not app.exception, app.exception
        run = ResultStore().get_run(run_id)
        assert run["config"]["options"]["plausibility"]["binarization"] == "top-p"
        wide = next(d.value for d in app.dataframe if d.value.index.name == "method")
        assert "Token F1 @ top-p ↑" in wide.columns and "Token F1 @ top-k ↑" not in wide.columns
        expected = next(r["mean"] for r in run_report(ResultStore(), run_id)["metrics"]
                        if r["method"] == "leave_one_out" and r["metric"] == "plaus_token_f1_topp")
        assert wide.loc[label_for("leave_one_out"), "Token F1 @ top-p ↑"].startswith(f"{expected:.3f} [")
    finally:
        app.selectbox(key="plaus-default-binarization").set_value("top-k").run()


def test_the_metrics_card_is_beside_the_preset(app):
    labels = [p.proto.popover.label for p in app.get("popover")]
    assert "About plausibility metrics" in labels
    assert any(m.value.startswith("## What it computes") and "rationale" in m.value for m in app.markdown)
