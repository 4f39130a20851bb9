"""The Heatmaps page with AppTest and the real default-quick model: every method at once, grouped by family,
method toggling, agreement values, the top-3 grid, export data, sentence pairs, bad input."""
from __future__ import annotations

import csv
import io
import json
import time

import numpy as np
import pytest

pytestmark = pytest.mark.integration

from conftest import ROOT

FAMILY_HEADINGS = ["#### Gradient-based", "#### Perturbation-based", "#### Attention-based", "#### Baselines",
                   "#### Ensembles"]


@pytest.fixture(scope="module")
def page_env(quick_classifier):
    """default-quick as the app's model; explanations cached in memory only (not in the user's cache)."""
    from explainers import cache

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_MODEL", "default-quick")
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        cache.DEFAULT_CACHE.clear()
        yield
        cache.DEFAULT_CACHE.clear()


SHORT_EXAMPLE = 2  # "not bad at all , actually ." (assets/examples.json): keeps the cold page quick


def open_page(**kept):
    """The page after its first run; ``kept`` pre-sets sidebar values (ui.widgets.state.kept keys) before that run."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:example_index"] = SHORT_EXAMPLE
    for key, value in kept.items():
        at.session_state[f"keep:{key}"] = value
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    at.run()
    assert not at.exception, at.exception
    return at


def open_panels(at, *keys):
    """Open the panels (expanders that draw their content only while open) with these keys, and rerun."""
    for key in keys:
        at.session_state[key] = True
    at.run()
    assert not at.exception, at.exception


def frame_with(at, column):
    return next(d.value for d in at.dataframe if column in d.value.columns)


@pytest.fixture(scope="module")
def page(page_env):
    return open_page()


def test_every_method_is_shown_grouped_by_family_with_cost_and_provenance(page):
    from explainers import REGISTRY
    from ui.views.heatmaps import page_methods

    at = page
    assert not at.error, [e.value for e in at.error]
    markdown = [m.value for m in at.markdown]
    positions = [markdown.index(h) for h in FAMILY_HEADINGS]
    assert positions == sorted(positions)
    bundle = at.session_state["heatmaps:export"]
    shown = [e.method_id for e in bundle.explanations]
    assert sorted(shown) == sorted(page_methods())
    for explanation in bundle.explanations:
        row = next(m for m in markdown if m.startswith(f"**{explanation.method_label}** <span"))
        assert "forward" in row and "backward passes" in row  # cost
    provenance = [e.label for e in at.expander if e.label.startswith("Provenance: ")]
    assert len(provenance) == len(page_methods())
    assert all("target: " in p and "normalization: none" in p for p in provenance)
    assert any("seed: 0" in p for p in provenance) and any("operator: mask" in p for p in provenance)
    assert len([h for h in at.get("html") if '<div class="xw-row">' in h.proto.body]) == len(page_methods())
    assert {REGISTRY[m].family for m in shown} == {"gradient", "perturbation", "attention", "baseline", "ensemble"}


def test_agreement_matrix_shows_the_rank_correlations_of_the_shown_scores(page):
    from evaluation.agreement.measures import agreement_matrix

    at = page
    bundle = at.session_state["heatmaps:export"]
    open_panels(at, "agreement-values-open")
    table = frame_with(at, bundle.explanations[0].method_label)
    expected = agreement_matrix(bundle.explanations, "spearman", absolute=True)
    values = table.set_index("method").loc[list(expected.labels), list(expected.labels)].to_numpy(dtype=float)
    np.testing.assert_allclose(values, expected.matrix, equal_nan=True)
    chart = next(c for c in at.get("plotly_chart") if "Spearman" in c.proto.spec)
    assert json.loads(chart.proto.spec)["data"][0]["type"] == "heatmap"
    at.radio(key="agreement-measure").set_value("kendall")
    at.run()
    kendall = frame_with(at, bundle.explanations[0].method_label).set_index("method")
    expected = agreement_matrix(bundle.explanations, "kendall", absolute=True)
    np.testing.assert_allclose(kendall.loc[list(expected.labels), list(expected.labels)].to_numpy(dtype=float),
                               expected.matrix, equal_nan=True)


def test_agreement_panel_offers_krishna_measures_shape_and_exports_them(page):
    from evaluation.agreement.measures import agreement_matrix, gini

    at = page
    bundle = at.session_state["heatmaps:export"]
    open_panels(at, "agreement-values-open", "agreement-shape-open")
    at.radio(key="agreement-measure").set_value("sign")
    at.number_input(key="agreement-k").set_value(2)
    at.run()
    assert not at.exception, at.exception
    shown = frame_with(at, bundle.explanations[0].method_label).set_index("method")
    expected = agreement_matrix(bundle.explanations, "sign", absolute=True, k=2)
    np.testing.assert_allclose(shown.loc[list(expected.labels), list(expected.labels)].to_numpy(dtype=float),
                               expected.matrix, equal_nan=True)
    assert any("Sign agreement @2" in c.proto.spec for c in at.get("plotly_chart"))
    shape = frame_with(at, "Sparseness (Gini) ↑").set_index("method")
    first = bundle.explanations[0]
    assert shape.loc[first.method_label, "Sparseness (Gini) ↑"] == pytest.approx(gini(first.word_scores))
    document = json.loads(bundle.json())
    assert set(document["context"]["agreement"]["agreement"]) >= {"feature", "rank", "sign", "signed-rank",
                                                                   "pairwise-rank", "pearson"}
    at.radio(key="agreement-measure").set_value("spearman")
    at.run()


def test_top_three_grid_has_a_row_per_method(page):
    from evaluation.agreement.measures import top_words

    at = page
    bundle = at.session_state["heatmaps:export"]
    grid = frame_with(at, "#3")
    assert len(grid) == len(bundle.explanations)
    lime = next(e for e in bundle.explanations if e.method_id == "lime")
    row = grid[grid["method"] == lime.method_label].iloc[0]
    assert row["#1"].startswith(top_words(lime, 1)[0][0] + " (")


def test_export_data_matches_what_is_shown(page):
    at = page
    bundle = at.session_state["heatmaps:export"]
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Scores (CSV)", "Scores + provenance (JSON)", "Heatmaps (HTML)", "Heatmaps (PNG)"]
    rows = list(csv.DictReader(io.StringIO(bundle.csv())))
    assert len(rows) == len(bundle.explanations) * bundle.explanations[0].n_words
    ig = next(e for e in bundle.explanations if e.method_id == "integrated_gradients")
    np.testing.assert_allclose([float(r["score"]) for r in rows if r["method"] == "integrated_gradients"],
                               ig.word_scores)
    document = json.loads(bundle.json())
    assert document["context"]["model"] == "default-quick"
    assert [e["method_id"] for e in document["explanations"]] == [e.method_id for e in bundle.explanations]
    html_page = bundle.html()
    assert all(e.method_label in html_page for e in bundle.explanations) and "<script" not in html_page
    assert bundle.png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_switching_methods_off_and_changing_the_display(page_env):
    at = open_page()
    at.multiselect(key="methods").set_value(["leave_one_out", "saliency"])
    at.selectbox(key="display-norm").set_value("abs-sum")
    at.run()
    assert not at.exception
    bundle = at.session_state["heatmaps:export"]
    assert [e.method_id for e in bundle.explanations] == ["saliency", "leave_one_out"]  # family order
    markdown = [m.value for m in at.markdown]
    assert "#### Gradient-based" in markdown and "#### Attention-based" not in markdown
    open_panels(at, "agreement-values-open")
    table = frame_with(at, "Leave-one-out")
    assert table.shape == (2, 3)
    rows = list(csv.DictReader(io.StringIO(bundle.csv())))
    shown = [float(r["display_score"]) for r in rows if r["method"] == "leave_one_out"]
    assert sum(shown) == pytest.approx(1.0) and bundle.normalization == "abs-sum"
    assert any("normalization: abs-sum" in e.label for e in at.expander)


def test_sentence_pair_scores_both_segments_with_the_boundary(page_env):
    at = open_page(input_source="Sentence pair", methods=["leave_one_out", "integrated_gradients", "lime"])
    bundle = at.session_state["heatmaps:export"]
    assert bundle.context["pair"]
    for explanation in bundle.explanations:
        assert set(explanation.word_segment) == {0, 1}
        assert len(explanation.word_scores) == len(explanation.words)
    rows = [h.proto.body for h in at.get("html") if '<div class="xw-row">' in h.proto.body]
    assert len(rows) == 3 and all("xw-sep" in body for body in rows)
    assert any("boundary" in c.value for c in at.caption)


@pytest.mark.parametrize("text,message", [("   ", "empty"), ("\u200b\u200b", "no words")])
def test_bad_text_gets_a_message_not_a_traceback(page_env, text, message):
    at = open_page(input_source="Your text", text=text, methods=["saliency"])
    assert not at.exception
    assert any(message in w.value for w in list(at.warning) + list(at.error)), [w.value for w in at.warning]


def test_odd_unicode_is_explained_and_escaped(page_env):
    at = open_page(input_source="Your text", text="naïve <b>café</b> 😀 ok", methods=["leave_one_out", "saliency"])
    assert not at.exception and not at.error
    bundle = at.session_state["heatmaps:export"]
    # typed text is split like the datasets (corpora/typed_text.py): the tag's marks become words of their own
    assert bundle.explanations[0].words == ("naïve", "<", "b", ">", "café", "<", "/", "b", ">", "😀", "ok")
    rows = [h.proto.body for h in at.get("html") if '<div class="xw-row">' in h.proto.body]
    assert rows and all("<b>" not in body and ">&lt;</span>" in body and ">café</span>" in body for body in rows)
    assert bundle.png()[:4] == b"\x89PNG"


def test_methods_over_the_budget_show_their_cost_and_wait_for_run(page_env, monkeypatch, background_jobs):
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")  # every method not cached yet waits
    at = open_page(input_source="Your text", text="a fresh sentence that nothing has explained yet",
                   methods=["occlusion", "lime"])
    assert not at.exception
    waiting = [i.value for i in at.info if i.value.startswith("Not run yet")]
    assert len(waiting) == 2 and all("forward" in w and "estimated" in w for w in waiting)
    cost = frame_with(at, "estimated seconds")
    assert set(cost["status"]) == {"to compute"} and (cost["forward passes"] > 0).all()
    run_lime = next(b for b in at.button if b.label.startswith("Run LIME"))
    run_lime.click()
    at.run()
    assert not at.exception
    settle(at, background_jobs)  # an approved method runs in the background (with progress and Stop)
    bundle = at.session_state["heatmaps:export"]
    assert [e.method_id for e in bundle.explanations] == ["lime"]
    assert len([i for i in at.info if i.value.startswith("Not run yet")]) == 1  # occlusion still waits
    # the estimate is replaced by what the run cost: LIME's measured seconds next to its estimate
    cost = frame_with(at, "estimated seconds")
    assert sorted(cost["status"]) == ["computed", "waiting for a Run click"]
    lime_row = cost[cost["status"] == "computed"].iloc[0]
    assert lime_row["measured seconds"] == round(bundle.explanations[0].provenance["seconds"], 2)
    titles = [e.label for e in at.expander if e.label.startswith(("Cost of this run", "Estimated cost"))]
    assert len(titles) == 1 and titles[0].startswith("Cost of this run: 1 method(s) computed in")
    assert titles[0].endswith("1 waiting for a Run click")


# ----- long methods: progress where they were started, and a Stop that keeps what finished ---------------
LONG_TEXT = " ".join(("the film is slow at first but the actors carry it and the music is lovely , though the plot "
                      "drags in places and the ending feels rushed .").split() * 8)  # ~200 words: LOO runs for a while


@pytest.fixture()
def background_jobs():
    """Leaves no method running after the test (the jobs are threads of this process)."""
    from explainers.method_jobs import METHOD_JOBS

    yield METHOD_JOBS
    METHOD_JOBS.stop_all(wait=60)


def page_nodes(at) -> list:
    """Every element of the page in display order."""
    return [node for node in at.main if getattr(node, "type", None) not in (None, "vertical", "horizontal")]


def row_of(at, label: str) -> list:
    """The elements of one method's row: from its bold label (the last one: the settings expander has one too) to
    the next bold label or heading."""
    nodes = page_nodes(at)
    start = max(i for i, n in enumerate(nodes) if n.type == "markdown" and n.value == f"**{label}**")
    row = []
    for node in nodes[start + 1:]:
        if node.type == "markdown" and (node.value.startswith("**") or node.value.startswith("####")):
            break
        row.append(node)
    return row


def click(at, label_start: str):
    next(b for b in at.button if b.label.startswith(label_start)).click()
    at.run()
    assert not at.exception, at.exception


def settle(at, jobs, seconds: float = 240.0) -> None:
    """While the page shows a method running (its Stop) or stopping: wait for the background jobs, rerun the page
    (AppTest does not poll like a browser)."""
    deadline = time.monotonic() + seconds
    while "Stop" in [b.label for b in at.button] or any(c.value.startswith("Stopping") for c in at.caption):
        while jobs.running():
            assert time.monotonic() < deadline, "a background method did not finish"
            time.sleep(0.2)
        at.run()
        assert not at.exception, at.exception


def test_a_long_method_shows_progress_and_a_stop_where_it_was_started(page_env, monkeypatch, background_jobs):
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")  # leave-one-out waits for its Run button
    at = open_page(input_source="Your text", text=LONG_TEXT, methods=["leave_one_out"])
    click(at, "Run Leave-one-out")
    row = row_of(at, "Leave-one-out")
    bars = [n for n in row if n.type == "progress"]
    assert len(bars) == 1, [n.type for n in row]
    n_words = len(LONG_TEXT.split())
    assert bars[0].text.startswith("Leave-one-out: ") and f"of about {n_words} forward passes" in bars[0].text
    assert "left" in bars[0].text and 0 <= bars[0].value < 100
    assert [n.label for n in row if n.type == "button"] == ["Stop"]  # next to its progress, nothing else
    assert not [i for i in at.info if i.value.startswith("Not run yet")]
    job = next(j for j in background_jobs.running() if j.planned.method_id == "leave_one_out")
    # the row counts the method's own batches: stopped after its first one, it says how far it got
    deadline = time.monotonic() + 120
    while job.progress().forward == 0:
        assert job.running and time.monotonic() < deadline
        time.sleep(0.1)
    job.stop(wait=120)
    at.run()
    done = job.progress().forward
    assert 0 < done < n_words
    notes = [n.value for n in row_of(at, "Leave-one-out") if n.type == "info"]
    assert len(notes) == 1 and notes[0].startswith(f"Stopped: Leave-one-out: {done} of about {n_words} forward passes")


def test_stop_keeps_the_finished_methods_and_the_stopped_one_can_run_again(page_env, monkeypatch, background_jobs):
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")
    at = open_page(input_source="Your text", text=LONG_TEXT, methods=["saliency", "leave_one_out"])
    click(at, "Run Saliency")
    settle(at, background_jobs)
    assert [e.method_id for e in at.session_state["heatmaps:export"].explanations] == ["saliency"]
    click(at, "Run Leave-one-out")
    assert [n.label for n in row_of(at, "Leave-one-out") if n.type == "button"] == ["Stop"]
    click(at, "Stop")
    assert "Stop" not in [b.label for b in at.button]  # stopping (at the end of its current batch) or stopped
    settle(at, background_jobs)
    bundle = at.session_state["heatmaps:export"]
    assert [e.method_id for e in bundle.explanations] == ["saliency"]  # the finished method stays shown
    row = row_of(at, "Leave-one-out")
    notes = [n.value for n in row if n.type == "info"]  # where its Run button was
    assert len(notes) == 1 and notes[0].startswith("Stopped: Leave-one-out: ") and "forward passes" in notes[0]
    assert not [n for n in row if n.type == "progress"]
    again = [n.label for n in row if n.type == "button"]
    assert len(again) == 1 and again[0].startswith("Run Leave-one-out again")
    assert "Stop" not in [b.label for b in at.button]
    click(at, "Run Leave-one-out again")
    assert [n.label for n in row_of(at, "Leave-one-out") if n.type == "button"] == ["Stop"]  # running again
    assert [e.method_id for e in at.session_state["heatmaps:export"].explanations] == ["saliency"]


def test_each_row_has_its_method_card_and_the_matrix_fits_every_method_on_one_scale(page):
    at = page
    bundle = at.session_state["heatmaps:export"]
    popovers = [p for p in at.get("popover") if p.proto.popover.label == "How it works, how it fails"]
    assert len(popovers) == len(bundle.explanations)
    saliency_card = next(m.value for m in at.markdown if m.value.startswith("## What it computes")
                         and "gradient" in m.value.lower())
    assert "## How it fails" in saliency_card
    assert not [c for c in at.get("plotly_chart") if "matrix-chart" in c.proto.id]  # built only when opened
    open_panels(at, "matrix-open")
    chart = next(c for c in at.get("plotly_chart") if "matrix-chart" in c.proto.id)
    figure = json.loads(chart.proto.spec)
    heatmap = next(trace for trace in figure["data"] if trace["type"] == "heatmap")
    assert len(heatmap["y"]) == len(bundle.explanations)
