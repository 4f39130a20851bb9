"""MaRC and AML on the Heatmaps page (the app side), with AppTest and the real default-quick model: MaRC's
live steps and Stop (the last mask kept with a note, never cached), AML's build flow when no attribution model
exists, the "tuned for" badge, and a clear message for each bad input."""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

pytestmark = pytest.mark.integration

from conftest import ROOT

TEXT = "the acting is superb but the plot is thin"
MARC = "MaRC (mask optimization)"


@pytest.fixture(scope="module")
def page_env(quick_classifier):
    """default-quick as the app's model; explanations cached in memory only (not in the user's cache)."""
    from explainers import cache

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_MODEL", "default-quick")
        patch.setattr(cache.DEFAULT_CACHE, "directory", None)
        cache.DEFAULT_CACHE.clear()
        yield quick_classifier
        cache.DEFAULT_CACHE.clear()


@pytest.fixture()
def background_jobs():
    """Leaves no method running after the test (the jobs are threads of this process)."""
    from explainers.method_jobs import METHOD_JOBS

    yield METHOD_JOBS
    METHOD_JOBS.stop_all(wait=60)


def open_page(text: str = TEXT, methods=("marc",), **kept):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=240)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = text
    at.session_state["keep:methods"] = list(methods)
    for key, value in kept.items():
        at.session_state[f"keep:{key}"] = value
    at.run()
    at.switch_page("app_pages/1_Heatmaps.py")
    at.run()
    assert not at.exception, at.exception
    return at


def click(at, label_start: str):
    next(b for b in at.button if b.label.startswith(label_start)).click()
    at.run()
    assert not at.exception, at.exception


def wait_for(condition, seconds: float = 120.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the background work did not get there"
        time.sleep(0.05)


def marc_settings(at, **values) -> None:
    """Set MaRC's parameters in the method settings (its panel opened on MaRC; widgets generated from its Params, no
    preset)."""
    at.session_state["methods-settings"] = True
    at.session_state["methods-settings-of"] = "marc"
    at.run()
    for name, value in values.items():
        widget = at.get("number_input") + at.get("checkbox")
        next(w for w in widget if w.key == f"methods-marc-None-{name}").set_value(value)
    at.run()
    assert not at.exception, at.exception


def job_of(jobs, method_id: str):
    return [j for j in list(jobs._jobs.values()) if j.planned.method_id == method_id][-1]  # the latest started


# ----- MaRC: live steps, Stop keeps the last mask (not cached) ------------------------------------------------------
def test_marc_shows_its_steps_and_the_mask_while_it_runs_and_a_stop_keeps_the_last_mask(page_env, background_jobs):
    from explainers.cache import cached_only

    at = open_page()
    assert any(b.label.startswith(f"Run {MARC}") for b in at.button)  # waits for a click (tens of seconds)
    marc_settings(at, max_steps=5000, early_stop=False)
    click(at, f"Run {MARC}")
    job = job_of(background_jobs, "marc")
    wait_for(lambda: job.live is not None and job.live.step >= 3)
    at.run()
    live = [c.value for c in at.caption if c.value.startswith("Step ")]
    assert len(live) == 1 and " of 5000 · loss " in live[0] and " · mean mask " in live[0]
    step = int(live[0].split()[1])
    assert step >= 3
    mask_rows = [h.proto.body for h in at.get("html") if '<div class="xw-row">' in h.proto.body]
    assert len(mask_rows) == 1 and all(f">{w}</span>" in mask_rows[0] for w in TEXT.split())  # the mask, live
    assert "Stop" in [b.label for b in at.button]
    click(at, "Stop")
    job.wait(60)
    at.run()
    assert not at.exception
    partial = job.partial
    steps = partial.provenance["details"]["steps"]
    assert steps >= step
    title = [m.value for m in at.markdown if m.value.startswith(f"**{MARC}** <span")]
    assert len(title) == 1  # the stopped run's row: the last mask, drawn like any result
    notes = [w.value for w in at.warning if w.value.startswith("Stopped at step")]
    assert notes == [f"Stopped at step {steps} of 5000: the scores are the last mask, not a converged one (not cached; "
                     f"run it again for the full result)."]
    assert any(i.value.startswith("Stopped: ") and "not cached" in i.value for i in at.info)
    assert any(b.label.startswith(f"Run {MARC} again") for b in at.button) and "Stop" not in [b.label for b in at.button]
    classifier = page_env
    assert cached_only(job.planned.explainer, classifier, job.encoding, None) is None
    assert "heatmaps:export" not in at.session_state or not at.session_state["heatmaps:export"].explanations


def test_a_completed_marc_run_is_shown_and_cached(page_env, background_jobs):
    from explainers.cache import cached_only

    at = open_page(text="a quiet , gentle film")
    marc_settings(at, max_steps=8)
    click(at, f"Run {MARC}")
    job = job_of(background_jobs, "marc")
    job.wait(120)
    assert job.status == "done", (job.status, job.error)
    at.run()
    at.run()  # the first rerun hands the finished job over; the second is served from the cache
    assert not at.exception
    explanation = cached_only(job.planned.explainer, page_env, job.encoding, None)
    assert explanation is not None and explanation.provenance["details"]["stop_reason"] == "step cap"
    shown = at.session_state["heatmaps:export"].explanations
    assert [e.method_id for e in shown] == ["marc"]
    np.testing.assert_array_equal(shown[0].word_scores, explanation.word_scores)
    assert not [w for w in at.warning if w.value.startswith("Stopped at step")]


# ----- AML: build the attribution model from the page, then the badge -------------------------------------------
AML = "AML (attributive masking learning)"
TINY_BUDGET = "train_size=16,validation_size=8,epochs=1"  # one training step: the flow, not the recipe


@pytest.fixture()
def aml_cache(page_env, quick_cache, monkeypatch):
    """A cache folder without any AML attribution model; the prepared default-quick is linked into it."""
    monkeypatch.setenv("EXWB_AML_BUDGET", TINY_BUDGET)
    return quick_cache


def wait_for_builds() -> None:
    from evaluation.runs.jobs import JOBS

    wait_for(lambda: not JOBS.active(), seconds=300)


def test_aml_without_an_attribution_model_offers_to_build_it_then_explains_with_its_badge(aml_cache):
    from explainers.mask_learning.aml_store import read_manifest

    at = open_page(methods=["aml"])
    notes = [i.value for i in at.info if i.value.startswith(f"{AML} needs an attribution model")]
    assert len(notes) == 1 and "Comprehensiveness (AOPC)" in notes[0] and "none exists yet" in notes[0]
    build = [b.label for b in at.button if b.label.startswith("Build the attribution model (about ")]
    assert len(build) == 1 and build[0].endswith(" min)")
    assert not at.error and not at.exception
    click(at, "Build the attribution model")
    assert any(p.text.startswith("0 of 1 builds") for p in at.get("progress"))  # the run's progress, while it trains
    wait_for_builds()
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    folders = [f for f in aml_cache.iterdir() if f.name.startswith("aml-")]
    assert len(folders) == 1 and read_manifest(folders[0])["train_inputs"] == 16  # the test's budget, not the recipe
    shown = at.session_state["heatmaps:export"].explanations
    assert [e.method_id for e in shown] == ["aml"]
    title = [m.value for m in at.markdown if m.value.startswith(f"**{AML} <span class='xw-badge'")]
    assert len(title) == 1 and ">tuned for Comprehensiveness (AOPC)</span>" in title[0]
    assert any(e.label.startswith("Provenance: tuned for Comprehensiveness (AOPC) · ") for e in at.expander)
    assert not [b for b in at.button if b.label.startswith("Build the attribution model")]
    exported = json.loads(at.session_state["heatmaps:export"].json())
    assert exported["explanations"][0]["provenance"]["details"]["badge"] == "tuned for Comprehensiveness (AOPC)"


@pytest.fixture(scope="module")
def quick_aml(page_env, tmp_path_factory):
    """An attribution model of default-quick (a tiny budget) in a cache folder of this module."""
    from corpora import load_dataset
    from explainers.cache import DEFAULT_CACHE
    from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
    from models.prepare import find_prepared

    cache = tmp_path_factory.mktemp("aml-pages") / "cache"
    (cache / "models").mkdir(parents=True)
    prepared = find_prepared("default-quick")
    (cache / "models" / prepared.name).symlink_to(prepared)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_CACHE_DIR", str(cache))
        inputs = [(e.text, e.pair) for e in load_dataset("sst2:dev", limit=24)]
        folder = prepare_aml(page_env, inputs, AMLRecipe(train_size=16, validation_size=8, epochs=1.0),
                             data_id="sst2:dev", log=lambda _: None)
        DEFAULT_CACHE.clear()  # explanations of another test's attribution model
        yield folder


def open_other_page(page: str, **state):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["keep:input_source"] = "Your text"
    at.session_state["keep:text"] = TEXT
    at.session_state["methods"] = ["random"]  # the first page explains only the random baseline
    at.run()
    at.switch_page(page)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_faithfulness_warns_where_aml_is_scored_on_the_metric_it_was_selected_on(quick_aml):
    at = open_other_page("app_pages/2_Faithfulness.py", **{"faith-methods": ["aml"], "faith-metrics": ["eraser"]})
    warnings = [w.value for w in at.warning if "optimistic by construction" in w.value]
    assert warnings == [f"{AML} is tuned for Comprehensiveness (AOPC): its Comprehensiveness (AOPC) score is "
                        f"optimistic by construction (it was selected on that metric); compare methods on another one."]
    at.session_state["faith-metrics"] = ["deletion"]  # a metric AML was not selected on: no warning
    at.run()
    assert not at.exception and not [w for w in at.warning if "optimistic by construction" in w.value]


def test_sanity_page_labels_aml_on_randomized_copies_as_the_original_models_g(quick_aml, page_env):
    at = open_other_page("app_pages/3_Sanity_checks.py", **{"sanity-methods": ["aml"]})
    notes = {i.value for i in at.info if "on the randomized copies" in i.value}  # in the layer and head sections
    assert notes == {f"{AML} on the randomized copies: labelled as the original model's G ({page_env.fingerprint}), "
                     f"not retrained for the copy; choose the fAML preset to fine-tune it on each copy."}
    assert not at.error, [e.value for e in at.error]  # no stage fails for want of a G trained for the copy
    rows = [m.value for m in at.markdown if m.value.startswith(f"**{AML}** · ρ")]
    assert len(rows) == 1
    shown = json.loads(next(j.proto.body for j in at.get("json") if '"stage_fingerprint"' in j.proto.body))
    assert shown["stage_fingerprint"] != page_env.fingerprint  # a randomized copy ...
    assert shown["explanation"]["details"]["trained_for_fingerprint"] == page_env.fingerprint  # ... the original's G
