"""The Faithfulness page with AppTest on the real quick model: curves with the random band, the metric table
(numbers checked against evaluation/ directly), the bias matrix, a dataset run from the page, bad input."""
from __future__ import annotations

import json

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/2_Faithfulness.py"
TEXT = "a gorgeous , witty film that drags badly in its final act"
METHODS = ["saliency", "leave_one_out"]


@pytest.fixture()
def page_cache(tmp_path, monkeypatch):
    """An isolated cache directory that still sees the prepared models, and an isolated explanation disk cache."""
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(models_dir(), target_is_directory=True)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    return cache


def _open(monkeypatch, metrics=("eraser", "deletion", "paper-004")) -> AppTest:
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"] if "random" in _registry() else ["attention"]
    at.run()
    assert not at.exception, at.exception
    at.switch_page(PAGE)
    at.session_state["faith-methods"] = METHODS
    at.session_state["faith-metrics"] = list(metrics)
    at.run()
    assert not at.exception, at.exception
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(TEXT).run()
    assert not at.exception, at.exception
    return at


def _registry():
    from explainers import REGISTRY

    return REGISTRY


def _charts(at) -> list[dict]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def _html(at) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def test_curves_table_and_bias_matrix(monkeypatch, quick_classifier, page_cache):
    from evaluation.faithfulness.one_input import evaluate_input
    from explainers import create, label_for

    at = _open(monkeypatch)
    assert [t.value for t in at.title] == ["Faithfulness"]
    assert not at.error, [e.value for e in at.error]
    # the curve: one line per method with its AOPC in the legend, and the random baseline with its band
    curve = next(c for c in _charts(at) if "Comprehensiveness" in json.dumps(c["layout"].get("title", "")))
    names = [trace.get("name", "") for trace in curve["data"]]
    assert any(n.startswith(f"{label_for('saliency')} · AOPC") for n in names)  # labels, not ids
    assert any(n.startswith(f"{label_for('leave_one_out')} · AOPC") for n in names)
    assert not any(n.startswith(("saliency", "leave_one_out")) for n in names)
    assert any(n.startswith("random baseline") for n in names)
    assert any(trace.get("fill") == "toself" for trace in curve["data"])  # the shaded band
    # the table: the same numbers as evaluation/ computes directly
    encoding = quick_classifier.encode(TEXT)
    explanations = {m: create(m).explain(quick_classifier, encoding) for m in METHODS}
    direct = evaluate_input(quick_classifier, encoding, explanations, ["comprehensiveness-eraser", "deletion-auc"],
                            {"seed": 0}).table().set_index(["metric", "method"])
    loo = label_for("leave_one_out")
    table = next(df.value for df in at.dataframe if loo in df.value.columns)
    cell = table.loc["Comprehensiveness (AOPC) ↑", loo]
    assert cell.startswith(f"{direct.loc[('comprehensiveness-eraser', 'leave_one_out'), 'value']:.3f}")
    assert table.loc["Deletion AUC ↓", "random baseline"].startswith(
        f"{direct.loc[('deletion-auc', 'random baseline'), 'value']:.3f} [")
    assert table.loc["Deletion AUC ↓", "operator"] == "delete"
    assert any("random baseline: 10 orderings" in c.value for c in at.caption)
    # readable: missing values as n/a (not None), "≈ random" as a marker in its cell, not a wall of text
    assert next(df for df in at.dataframe if loo in df.value.columns).proto.placeholder == "n/a"
    assert not any("distinguishable" in w.value for w in at.warning)
    marked = int(table.map(lambda v: isinstance(v, str) and v.endswith("≈ random")).to_numpy().sum())
    assert any(f"marks {marked} value(s)" in c.value for c in at.caption) == (marked > 0)
    # the bias matrix: leave-one-out deletes words, as Deletion and ERASER do -> highlighted, with the reason
    page = _html(at)
    assert "&#9888;" in page and loo in page
    assert any("Deletion AUC" in c.value and "paper 000" in c.value for c in at.caption if c.value.startswith("⚠"))
    assert len(at.get("download_button")) >= 3
    # another operator and the gold-label option change the provenance shown
    at.selectbox(key="faith-operator").set_value("mask").run()
    assert not at.exception, at.exception
    table = next(df.value for df in at.dataframe if loo in df.value.columns)
    assert set(table["operator"]) == {"[MASK]"}


def test_dataset_run_from_the_page(monkeypatch, quick_classifier, page_cache):
    from evaluation.runs.jobs import JOBS
    from evaluation.runs.store import ResultStore
    from evaluation.suite.runner import KIND
    from explainers import label_for
    from ui.views.faithfulness import RUN_KEY

    # another user's failed run of another model, in the shared store
    other = ResultStore().create_run(KIND, {"model": "someone/else", "evaluators": ["eraser"]}, 5,
                                     title="another model's run")
    ResultStore().set_status(other, "failed")
    at = _open(monkeypatch, metrics=("eraser",))
    at.number_input(key="faith-limit").set_value(3).run()
    at.button(key="faith-start").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state[RUN_KEY]
    JOBS.wait(run_id, timeout=240)
    assert not JOBS.is_running(run_id)
    at.run()
    assert not at.exception, at.exception
    assert any("3 examples" in c.value and "bootstrap" in c.value for c in at.caption)
    # the run list shows this model's runs; the other model's run only on request
    assert [o for o in at.selectbox(key="faith-show-run").options if "another model" in o] == []
    assert any("1 run(s) of other models hidden" in c.value for c in at.caption)
    at.toggle(key="faith-show-run-all").set_value(True).run()
    assert any("another model's run" in o and "someone/else" in o for o in at.selectbox(key="faith-show-run").options)
    at.toggle(key="faith-show-run-all").set_value(False).run()
    table = next(df.value for df in at.dataframe if "Sufficiency (AOPC) ↓" in df.value.columns)
    assert list(table.index) == [label_for(m) for m in METHODS] + ["random baseline"]
    assert "band [" in table.loc["random baseline", "Comprehensiveness (AOPC) ↑"]
    charts = _charts(at)
    assert any(any("95 % CI shaded" in t.get("name", "") for t in c["data"]) for c in charts)
    # a finished run reopens from the store (no recomputation): a new session shows the same table
    fresh = _open(monkeypatch, metrics=("eraser",))
    again = next(df.value for df in fresh.dataframe if "Sufficiency (AOPC) ↓" in df.value.columns)
    assert again.equals(table)


def test_bad_input_and_missing_pieces(monkeypatch, quick_classifier, page_cache):
    from models.mlm import clear_loaded

    # a models folder without the masked-LM filler, whatever this machine has prepared
    (page_cache / "models").unlink()
    (page_cache / "models").mkdir()
    (page_cache / "models" / quick_classifier.source.split("/")[-1]).symlink_to(quick_classifier.source)
    clear_loaded()  # the masked LM is looked up again, in this cache
    at = _open(monkeypatch)
    at.text_area(key="text").input("   ").run()
    assert not at.exception and any("empty" in w.value for w in at.warning)
    at.text_area(key="text").input("<b>bold</b> 😀 ok").run()
    assert not at.exception, at.exception
    assert "<b>bold</b>" not in _html(at)
    at.multiselect(key="faith-metrics").set_value(["deletion-bert"]).run()
    assert not at.exception, at.exception
    assert any("prepare-mlm" in w.value for w in at.warning)  # no filler prepared in this cache
    assert any("at least one metric" in i.value for i in at.info)
    at.multiselect(key="faith-methods").set_value([]).run()
    assert not at.exception and any("at least one method" in i.value for i in at.info)
    from evaluation.faithfulness.known_feature import is_prepared

    if is_prepared():  # the known-feature tab: the model's provenance, or how to train it
        assert any("held-out task accuracy" in c.value for c in at.caption)
    else:
        assert any("not trained yet" in i.value for i in at.info)


def test_methods_waiting_for_approval_show_one_run_button(monkeypatch, quick_classifier, page_cache):
    from explainers.cache import DEFAULT_CACHE

    DEFAULT_CACHE.clear()  # nothing cached in memory from earlier tests
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")  # every method not cached waits for its Run button
    at = _open(monkeypatch)
    assert not at.exception, at.exception
    buttons = [b for b in at.button if b.key and b.key.startswith("run-")]
    assert len(buttons) == len(METHODS)  # once, although two tabs use the explanations
    assert any("waiting for a Run button" in i.value for i in at.info)
    buttons[0].click().run()
    assert not at.exception, at.exception
    assert any(c.value.startswith("Operator:") for c in at.caption)  # the approved method's curve is drawn


def test_the_explained_class_is_the_measured_class(monkeypatch, quick_classifier, page_cache):
    """with another class picked in the sidebar, the page explained that class but ranked and scored the
    explanation against the predicted one. Now both use one class, shown once, and the numbers are the metrics of
    explanations of that class read on that class (the random baseline too)."""
    import numpy as np

    from corpora import Example
    from evaluation.faithfulness.one_input import evaluate_input
    from explainers import create, label_for

    encoding = quick_classifier.encode(TEXT)
    other = 1 - int(np.argmax(quick_classifier.proba_of(encoding)))  # the class the model does not predict
    name = quick_classifier.labels[other]
    at = _open(monkeypatch, metrics=("eraser",))
    at.selectbox(key="target-default-quick").set_value(other).run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    shown = [c.value for c in at.caption if c.value.startswith("Explaining:")]
    assert shown == [f"Explaining: **{name}** (chosen)"]
    assert not any("class measured" in c.value for c in at.caption)
    # the same numbers as evaluation/ gives for explanations of `other` read on `other` (written as a gold label,
    # which every version of the metrics reads)
    explanations = {m: create(m).explain(quick_classifier, encoding, other) for m in METHODS}
    example = Example(id="x", text=TEXT, label=other, label_names=tuple(quick_classifier.labels))
    direct = evaluate_input(quick_classifier, encoding, explanations, ["comprehensiveness-eraser"],
                            {"seed": 0, "target": "gold"}, example).table().set_index(["metric", "method"])
    table = next(df.value for df in at.dataframe if label_for("leave_one_out") in df.value.columns)
    for method in METHODS:
        assert table.loc["Comprehensiveness (AOPC) ↑", label_for(method)].startswith(
            f"{direct.loc[('comprehensiveness-eraser', method), 'value']:.3f}")
    assert table.loc["Comprehensiveness (AOPC) ↑", "random baseline"].startswith(
        f"{direct.loc[('comprehensiveness-eraser', 'random baseline'), 'value']:.3f} [")
    # the gold label of typed text does not exist: the predicted class is explained and measured, and said so
    at.radio(key="faith-target").set_value("gold").run()
    assert not at.exception, at.exception
    predicted = quick_classifier.labels[1 - other]
    assert [c.value for c in at.caption if c.value.startswith("Explaining:")] == \
        [f"Explaining: **{predicted}** (the predicted class)"]
    assert any("no gold label: the predicted class is explained and measured" in c.value for c in at.caption)


def test_a_started_run_is_the_run_shown(monkeypatch, quick_classifier, page_cache):
    """after Start, the 'Show run' box kept the previously selected run, so the page showed the old
    run's progress, table and curves while the new one ran unseen."""
    from evaluation.runs.jobs import JOBS
    from ui.views.faithfulness import RUN_KEY

    at = _open(monkeypatch, metrics=("eraser",))
    at.number_input(key="faith-limit").set_value(1).run()
    at.button(key="faith-start").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    first = at.session_state[RUN_KEY]
    JOBS.wait(first, timeout=240)
    at.run()
    assert at.selectbox(key="faith-show-run").value == first
    at.number_input(key="faith-limit").set_value(2).run()
    at.button(key="faith-start").click().run()
    assert not at.exception, at.exception
    second = at.session_state[RUN_KEY]
    try:
        assert second != first
        assert at.selectbox(key="faith-show-run").value == second
        assert any(" of 2 examples" in p.proto.text for p in at.get("progress"))
        assert not any("1 of 1 examples" in p.proto.text for p in at.get("progress"))
    finally:
        JOBS.wait(second, timeout=240)
    # the user's own pick stands afterwards
    at.selectbox(key="faith-show-run").set_value(first).run()
    at.run()
    assert at.selectbox(key="faith-show-run").value == first


def test_schema_generated_options_reach_the_metrics(monkeypatch, quick_classifier, page_cache):
    """The removal options are drawn from RemovalOptions' param() schema: values set through those widgets are
    the options evaluation/ computes with (checked against a direct computation with the same options)."""
    from evaluation.faithfulness.one_input import evaluate_input
    from explainers import create, label_for

    at = _open(monkeypatch, metrics=("eraser",))
    at.checkbox(key="faith-exclude_special").uncheck().run()
    at.number_input(key="faith-seed").set_value(5).run()
    at.selectbox(key="faith-rank_by").set_value("absolute").run()
    at.number_input(key="faith-random_orderings").set_value(12).run()
    assert not at.exception, at.exception
    assert any("special tokens counted" in c.value and "seed 5" in c.value and "12 orderings" in c.value
               for c in at.caption)
    encoding = quick_classifier.encode(TEXT)
    explanations = {m: create(m).explain(quick_classifier, encoding) for m in METHODS}
    options = {"seed": 5, "exclude_special": False, "rank_by": "absolute"}
    direct = evaluate_input(quick_classifier, encoding, explanations, ["comprehensiveness-eraser"], options,
                            n_random=12).table().set_index(["metric", "method"])
    default = evaluate_input(quick_classifier, encoding, explanations, ["comprehensiveness-eraser"], {"seed": 0}
                             ).table().set_index(["metric", "method"])
    loo = label_for("leave_one_out")
    table = next(df.value for df in at.dataframe if loo in df.value.columns)
    value = direct.loc[("comprehensiveness-eraser", "leave_one_out"), "value"]
    assert table.loc["Comprehensiveness (AOPC) ↑", loo].startswith(f"{value:.3f}")
    # the options matter here: with the defaults, the number differs (so the check above can fail)
    assert f"{default.loc[('comprehensiveness-eraser', 'leave_one_out'), 'value']:.3f}" != f"{value:.3f}"


def test_each_chosen_metric_has_its_card(monkeypatch, quick_classifier, page_cache):
    at = _open(monkeypatch, metrics=("eraser", "deletion"))
    labels = [p.proto.popover.label for p in at.get("popover")]
    assert any(label.startswith("About") and "ERASER" in label for label in labels), labels
    # one card per chosen metric, and the F-Fidelity section's own card (that section is always on the page)
    assert sum(label.startswith("About") and label != "About F-Fidelity" for label in labels) == 2
    assert "About F-Fidelity" in labels
    assert any(m.value.startswith("## What it computes") and "comprehensiveness" in m.value.lower()
               for m in at.markdown)


def test_normalized_and_in_distribution_measures_on_this_input(monkeypatch, quick_classifier, page_cache):
    from evaluation.faithfulness import other_measures
    from explainers import create, label_for

    at = _open(monkeypatch, metrics=("eraser",))
    at.multiselect(key="faith-measures").set_value(["naopc", "soft"]).run()
    assert not at.exception, at.exception
    at.number_input(key="faith-measures-soft_samples").set_value(4).run()
    assert not at.exception, at.exception
    encoding = quick_classifier.encode(TEXT)
    explanations = {m: create(m).explain(quick_classifier, encoding) for m in METHODS}
    options = {"target": "predicted", "operator": None, "exclude_special": True, "seed": 0, "random_orderings": 10,
               "naopc_exact_words": 8, "naopc_beam": 1, "soft_samples": 4}
    direct = other_measures.measures_table(quick_classifier, encoding, explanations, ["naopc", "soft"], options)
    direct = direct.set_index(["metric", "method"])
    table = next(df.value for df in at.dataframe if "NAOPC comprehensiveness ↑" in df.value.index)
    loo = label_for("leave_one_out")
    for metric, label in (("naopc-comprehensiveness", "NAOPC comprehensiveness ↑"),
                          ("soft-sufficiency", "Soft normalized sufficiency ↑")):
        assert table.loc[label, loo].startswith(f"{direct.loc[(metric, 'leave_one_out'), 'value']:.3f}")
        assert "[" in table.loc[label, "random baseline"]  # the band
    assert any("NAOPC bounds: beam search" in c.value for c in at.caption)  # 13 words > 10: the beam
    assert any(b.proto.label == "Download these measures (CSV)" for b in at.get("download_button"))


def test_runs_of_the_newer_measures_alone_are_listed_as_faithfulness_runs():
    from ui.views.faithfulness import _is_faithfulness

    assert _is_faithfulness({"config": {"evaluators": ["naopc"]}})
    assert _is_faithfulness({"config": {"evaluators": ["soft"]}})
    assert not _is_faithfulness({"config": {"evaluators": ["plausibility"]}})


def test_f_fidelity_offers_to_build_its_copy_and_measures_with_the_random_band(monkeypatch, quick_classifier,
                                                                                 page_cache):
    from evaluation.faithfulness import other_measures
    from explainers import create, label_for

    at = _open(monkeypatch, metrics=("eraser",))
    at.toggle(key="faith-ffid-on").set_value(True).run()
    assert not at.exception, at.exception
    assert any("not built yet" in i.value for i in at.info)  # no fine-tuned copy in this fresh cache
    assert any(b.label == "Build the fine-tuned copy" for b in at.button)
    at.number_input(key="faith-ffid-samples").set_value(2).run()  # 2 draws: a cheap page run
    at.checkbox(key="faith-ffid-orig").check().run()  # measure on the explained model meanwhile
    assert not at.exception, at.exception
    encoding = quick_classifier.encode(TEXT)
    explanations = {m: create(m).explain(quick_classifier, encoding) for m in METHODS}
    options = {"target": "predicted", "operator": None, "exclude_special": True, "seed": 0, "random_orderings": 10,
               "ffid_preset": "quick", "ffid_samples": 2, "ffid_alpha": 0.5, "ffid_beta": 0.1, "ffid_score": "probability",
               "ffid_model": "original"}
    direct = other_measures.measures_table(quick_classifier, encoding, explanations, ["ffid"], options)
    direct = direct.set_index(["metric", "method"])
    table = next(df.value for df in at.dataframe if "FFid+ (F-Fidelity) ↑" in df.value.index)
    loo = label_for("leave_one_out")
    expected = direct.loc[("ffid_plus", "leave_one_out"), "value"]
    assert table.loc["FFid+ (F-Fidelity) ↑", loo].startswith(f"{expected:.3f}")
    assert "[" in table.loc["FFid- (F-Fidelity) ↓", "random baseline"]  # the band
    assert any(b.proto.label == "Download F-Fidelity (CSV)" for b in at.get("download_button"))


def test_paper_002_says_it_reads_the_gold_label_when_the_page_measures_another_class(monkeypatch, quick_classifier,
                                                                                      page_cache):
    """paper 002's metrics read the gold label (Eq. 10-11); the page has one target, so where it measures
    the predicted class it says what paper 002 would read, and the note goes once 'gold label' is picked."""
    note = "Paper 002's comprehensiveness and sufficiency read the gold label's probability"
    at = _open(monkeypatch, metrics=("paper-002",))
    assert any(c.value.startswith(note) and "predicted class" in c.value for c in at.caption)
    at.radio(key="faith-target").set_value("gold").run()
    assert not at.exception, at.exception
    assert not any(c.value.startswith(note) for c in at.caption)
    at.session_state["faith-metrics"] = ["eraser"]
    at.radio(key="faith-target").set_value("sidebar").run()
    assert not any(c.value.startswith(note) for c in at.caption)  # ERASER reads the predicted class, as here
