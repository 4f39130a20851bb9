"""The sanity page with AppTest on the real quick model: live layer randomization (heatmaps, curve, verdicts,
degradation grid), paper 000's head check, a dataset run, and the safety check of the issue: randomizing in one
session while another session explains must leave the other session's numbers exactly the unrandomized ones."""
from __future__ import annotations

import base64
import html
import json
import threading
import time

import numpy as np
import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from evaluation.runs.jobs import JOBS
from explainers import label_for
from ui.views.sanity_measures import REPEAT_TASK, SMPRT_TASK

pytestmark = pytest.mark.integration

PAGE = "app_pages/3_Sanity_checks.py"
FEW = ["saliency", "leave_one_out", "random"]


@pytest.fixture()
def sanity_cache(tmp_path, monkeypatch):
    """An isolated cache directory that still sees the prepared models, and an isolated explanation disk cache."""
    from explainers.cache import DEFAULT_CACHE
    from models.prepare import models_dir

    real = models_dir()
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "models").symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(cache))
    monkeypatch.setattr(DEFAULT_CACHE, "directory", cache / "explanations")
    return cache


def _open(monkeypatch, page: str | None = PAGE, methods: list[str] = FEW) -> AppTest:
    """The app opened on ``page`` with ``methods`` chosen (the first page only explains the random baseline)."""
    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["methods"] = ["random"] if page is not None else methods
    at.run()
    assert not at.exception, at.exception
    if page is not None:
        at.switch_page(page)
        at.session_state["sanity-methods"] = methods
        at.run()
        assert not at.exception, at.exception
    return at


def _html(at) -> str:
    return "\n".join(element.proto.body for element in at.get("html"))


def _values(data) -> np.ndarray:
    """Plotly's JSON: a list, or a typed array {"dtype": "f8", "bdata": base64}."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
    return np.asarray(data, dtype=float)


def _type(at, text: str) -> None:
    at.radio(key="input_source").set_value("Your text").run()
    at.text_area(key="text").input(text).run()
    assert not at.exception, at.exception


def test_layer_randomization_page(monkeypatch, quick_classifier, sanity_cache):
    at = _open(monkeypatch)
    _type(at, "a gorgeous , witty film that drags badly in its final act")
    assert [t.value for t in at.title] == ["Sanity checks"]
    assert not at.error, [e.value for e in at.error]
    slider = at.select_slider(key="sanity-stage")
    assert slider.options == ["head", "block 5", "block 4", "block 3", "block 2", "block 1", "block 0", "embeddings"]
    verdicts = next(df.value for df in at.dataframe if "verdict" in df.value.columns).set_index("method")
    random, saliency = label_for("random"), label_for("saliency")  # tables and legends show labels, not ids
    assert verdicts.loc[random, "verdict"] == "fails"  # the seeded random baseline ignores the model
    assert verdicts.loc[random, "spearman"] == pytest.approx(1.0)
    assert -1 <= verdicts.loc[saliency, "spearman"] <= 1
    page = _html(at)
    assert page.count("xw-grid") == 3 and "gorgeous" in page
    # the curve: one line per method plus the random baseline, x = the 9 stages, random stays at 1
    curve = next(json.loads(c.proto.spec) for c in at.get("plotly_chart") if "random ranking" in c.proto.spec)
    lines = {t["name"]: t for t in curve["data"] if t.get("mode") == "lines+markers"}
    assert set(lines) == {label_for(m) for m in FEW}
    assert np.allclose(_values(lines[random]["y"]), 1.0) and len(_values(lines[random]["y"])) == 9
    assert all(t.get("mode") == "lines" for t in curve["data"] if t.get("fill") == "toself")  # bands: no markers
    assert curve["layout"]["xaxis"]["ticktext"][0] == "original" and curve["layout"]["xaxis"]["ticktext"][-1] == \
        "embeddings"
    # the randomized model's prediction, then move the control to the embeddings
    head_text = next(m.value for m in at.markdown if m.value.startswith("**Randomized model (head)"))
    slider.set_value("embeddings").run()
    assert not at.exception, at.exception
    assert any(m.value.startswith("**Randomized model (embeddings)") for m in at.markdown)
    assert head_text not in [m.value for m in at.markdown]
    # the numbers shown for a method equal the single-input computation with the same settings
    from evaluation.sanity.one_input import run_sanity

    encoding = quick_classifier.encode("a gorgeous , witty film that drags badly in its final act")
    result = run_sanity(quick_classifier, encoding, ["saliency"], cache=None)
    expected = result.frame().set_index(["stage", "method"]).loc[("embeddings", "saliency"), "spearman"]
    line = next(m.value for m in at.markdown if m.value.startswith(f"**{saliency}** · ρ"))
    assert f"ρ {expected:+.2f}" in line
    # verdict badges in text and shipped Material icons: emoji render as boxes without an emoji font
    badges = [m.value for m in at.markdown if m.value.startswith("**") and "ρ(|·|)" in m.value]
    assert len(badges) == len(FEW) and all(":material/" in b for b in badges)
    assert not any(ch in b for b in badges for ch in "🔴🟢⚪")
    # independent mode with N(0, 1) re-initialization and another seed
    at.selectbox(key="sanity-mode").set_value("independent").run()
    at.selectbox(key="sanity-init").set_value("normal").run()
    at.number_input(key="sanity-seed").set_value(3).run()
    assert not at.exception, at.exception
    assert at.select_slider(key="sanity-stage").label == "Randomized unit"
    assert any("init: N(0, 1)" in c.value and "seed 3" in c.value for c in at.caption)
    # an option drawn from SanityOptions' schema (no UI code of its own) reaches the computation
    at.number_input(key="sanity-top_fraction").set_value(0.5).run()
    assert not at.exception, at.exception
    assert any("top-k = 50% of the words" in c.value for c in at.caption)
    # paper 000's head check is on the second tab: per-method table with the sign-change share
    summary = next(df for df in at.dataframe if "sign_change_mean" in df.value.columns)
    assert summary.proto.placeholder == "n/a"  # unsigned methods have no sign change: n/a, not None
    head = summary.value.set_index("method")
    assert head.loc[random, "mean_abs_change_mean"] == 0.0
    assert 0.0 <= head.loc[label_for("leave_one_out"), "sign_change_mean"] <= 1.0
    assert len([b for b in at.get("download_button")]) >= 4


def test_no_stop_button_when_nothing_runs(monkeypatch, quick_classifier, sanity_cache):
    """Stop is shown only while its work runs, not while the page waits for "Run" nor after it finished."""
    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")  # the layer randomization waits for its Run button
    at = _open(monkeypatch, methods=["saliency", "random"])
    _type(at, "a witty film that drags")
    assert any(b.label.startswith("Run layer randomization") for b in at.button)  # idle: work is waiting
    assert "Stop" not in [b.label for b in at.button]
    next(b for b in at.button if b.label.startswith("Run layer randomization")).click().run()
    assert not at.exception, at.exception
    assert at.select_slider(key="sanity-stage").options[-1] == "embeddings"  # it ran and finished
    assert "Stop" not in [b.label for b in at.button]


def test_bad_input_gives_messages_not_tracebacks(monkeypatch, quick_classifier, sanity_cache):
    at = _open(monkeypatch, methods=["saliency"])
    _type(at, "   ")
    assert not at.exception and any("empty" in w.value for w in at.warning)
    _type(at, "<b>bold</b> 😀")
    assert not at.exception, at.exception
    page = _html(at)
    # typed text is split like the datasets ("< b > bold < / b >"): each mark is escaped, none reaches the HTML raw
    assert ">&lt;</span>" in page and ">bold</span>" in page and "<b>" not in page and "</b>" not in page
    at.text_input(key="sanity-head-seeds").input("one, two").run()
    assert any("whole numbers" in e.value for e in at.error)
    at.multiselect(key="sanity-methods").set_value([]).run()
    assert not at.exception and any("at least one method" in i.value for i in at.info)


def test_dataset_run_from_the_page(monkeypatch, quick_classifier, sanity_cache):
    from evaluation.runs.jobs import JOBS

    at = _open(monkeypatch, methods=["attention", "random"])
    at.number_input(key="sanity-limit").set_value(3).run()
    at.button(key="sanity-start").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state["sanity_run"]
    JOBS.wait(run_id, timeout=240)
    assert not JOBS.is_running(run_id)
    at.run()
    assert not at.exception, at.exception
    assert any("3 examples" in c.value and "bootstrap" in c.value for c in at.caption)
    flags = next(df.value for df in at.dataframe if "verdict" in df.value.columns and len(df.value) == 2)
    assert set(flags["method"]) == {label_for("attention"), label_for("random")}
    assert flags.set_index("method").loc[label_for("random"), "verdict"] == "fails"
    table = next(df.value for df in at.dataframe if "ci_method" in df.value.columns)
    accuracy = table[(table["method"] == "(model)") & (table["metric"] == "correct")]
    assert len(accuracy) == 9 and accuracy["mean"].between(0, 1).all()


def _titles(explanation) -> list[str]:
    """The tooltip text ui/widgets/heatmap.py writes for each word of a row (3 significant digits)."""
    return [f'title="{html.escape(w)}: {v:+.3g}"' for w, v in zip(explanation.words, explanation.word_scores)]


def test_randomizing_in_one_session_leaves_another_sessions_numbers_unchanged(monkeypatch, quick_classifier,
                                                                            sanity_cache):
    from explainers import create
    from models import load_classifier

    reference_model = load_classifier("default-quick")  # a separate copy nobody else touches
    before = {k: v.clone() for k, v in reference_model.model.state_dict().items()}
    methods = ["saliency", "input_x_gradient", "leave_one_out"]
    texts = ["the acting is superb but the script is a mess", "an utterly forgettable and tedious sequel",
             "warm , funny and surprisingly moving", "the plot never quite comes together",
             "a bold , beautiful and strange experience", "dull characters in a pretty setting"]

    randomizer = _open(monkeypatch, methods=["random"])
    randomizer.multiselect(key="sanity-methods").set_value(["saliency", "input_x_gradient", "leave_one_out",
                                                            "attention"])
    randomizer.selectbox(key="sanity-init").set_value("normal")  # N(0, 1): the most destructive setting
    explainer = _open(monkeypatch, page=None, methods=methods)  # the Heatmaps page
    explainer.radio(key="input_source").set_value("Your text").run()

    span = {}
    failure = []

    def randomize_session():
        span["start"] = time.perf_counter()
        try:
            randomizer.run()
        except Exception as error:  # noqa: BLE001 reported below
            failure.append(error)
        span["end"] = time.perf_counter()

    thread = threading.Thread(target=randomize_session)
    thread.start()
    shown = []
    for text in texts:  # explain in the other session while the randomization runs
        started = time.perf_counter()
        explainer.text_area(key="text").input(text).run()
        shown.append((text, _html(explainer), started, time.perf_counter()))
        if not thread.is_alive() and len(shown) >= 2:
            break
    thread.join(timeout=600)
    assert not failure and not randomizer.exception, failure or randomizer.exception
    assert any("Randomized model" in m.value for m in randomizer.markdown)  # the randomization did happen
    assert any(start < span["end"] and end > span["start"] for _, _, start, end in shown)  # and overlapped
    assert not explainer.exception, explainer.exception
    for text, page, _, _ in shown:
        encoding = reference_model.encode(text)
        for method in methods:
            expected = create(method).explain(reference_model, encoding)
            missing = [t for t in _titles(expected) if t not in page]
            assert not missing, (text, method, missing)
    # the shared model itself is bit for bit the prepared one
    from ui.widgets import loaders

    shared = loaders.classifier("default-quick")
    state = shared.model.state_dict()
    assert all(np.array_equal(state[k].numpy(), v.numpy()) for k, v in before.items())


def test_the_sanity_checks_card_is_beside_the_settings(monkeypatch, quick_classifier, sanity_cache):
    at = _open(monkeypatch)
    labels = [p.proto.popover.label for p in at.get("popover")]
    assert "About sanity checks" in labels
    assert any(m.value.startswith("## What it computes") and "random" in m.value.lower() for m in at.markdown)


def test_issue_18_measures_on_the_page(monkeypatch, quick_classifier, sanity_cache, tmp_path):
    """eMPRT beside the layer curves (equal to the direct computation, with its random band), repeatability across
    seeds, and the data-randomization tab: build a permuted-label model (2 steps) with progress, then compare maps."""
    from evaluation.runs.jobs import JOBS
    from evaluation.sanity import emprt
    from evaluation.sanity.one_input import CHANCE, run_sanity

    text = "a witty film that drags"
    at = _open(monkeypatch, methods=["saliency", "random"])
    _type(at, text)
    assert not at.error, [e.value for e in at.error]
    table = next(df.value for df in at.dataframe if any(c.startswith("eMPRT") for c in df.value.columns))
    column = next(c for c in table.columns if c.startswith("eMPRT"))
    result = run_sanity(quick_classifier, quick_classifier.encode(text), ["saliency", "random"], cache=None)
    expected = emprt.emprt(result)
    shown = table.set_index("method")[column]
    assert shown[label_for("saliency")] == pytest.approx(expected["saliency"], abs=1e-6)
    assert CHANCE in shown.index and np.isfinite(shown[CHANCE])
    # repeatability: the deterministic gradient repeats exactly, the seeded random baseline does not
    at.button(key="sanity-repeat-run").click().run()
    assert at.session_state[REPEAT_TASK].finished.wait(300)  # a background job with Stop
    at.run()
    assert not at.exception, at.exception
    repeat = next(df.value for df in at.dataframe if any(c.startswith("Repeatability: mean pairwise Spearman")
                                                          for c in df.value.columns)).set_index("method")
    values = repeat[next(c for c in repeat.columns if c.startswith("Repeatability"))]
    assert values[label_for("saliency")] == 1.0 and values[label_for("random")] < 1.0 and CHANCE in values.index
    # data randomization: build the permuted-label model in the background, then the maps are compared
    data = tmp_path / "train.jsonl"
    data.write_text("\n".join(json.dumps({"text": f"{w} film number {i}", "label": i % 2})
                              for i, w in enumerate(["good", "bad", "dull", "great"] * 8)))
    at.text_input(key="sanity-dr-data").input(f"file:{data}").run()
    at.number_input(key="sanity-dr-steps").set_value(2).run()
    at.button(key="sanity-dr-build").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state["sanity-dr-run"]
    JOBS.wait(run_id, timeout=300)
    at.run()
    assert not at.exception, at.exception
    compared = next(df.value for df in at.dataframe if any(c.startswith("Data randomization: Spearman")
                                                            for c in df.value.columns)).set_index("method")
    values = compared[next(c for c in compared.columns if c.startswith("Data randomization"))]
    assert values[label_for("random")] == pytest.approx(1.0, abs=1e-12) and -1.0 <= values[label_for("saliency")] <= 1.0
    assert any("agree with the true labels" in c.value for c in at.caption)


def test_smprt_on_the_page_equals_the_direct_computation_with_its_random_band(monkeypatch, quick_classifier,
                                                                              sanity_cache):
    """sMPRT on the page: its own preset and N, a run button, and per method the value the direct
    computation gives, next to the random band."""
    from evaluation.sanity import smprt
    from evaluation.sanity.one_input import CHANCE

    text = "a witty film that drags"
    at = _open(monkeypatch, methods=["saliency", "random"])
    _type(at, text)
    at.selectbox(key="sanity-smprt-preset").set_value("quick").run()
    at.number_input(key="sanity-smprt-quick-samples").set_value(2).run()
    at.button(key="sanity-smprt-run").click().run()
    assert not at.exception, at.exception
    assert at.session_state[SMPRT_TASK].finished.wait(300)  # a background job (Stop)
    at.run()
    table = next(df.value for df in at.dataframe if any(c.startswith("sMPRT") for c in df.value.columns))
    shown = table.set_index("method")[next(c for c in table.columns if c.startswith("sMPRT"))]
    result = smprt.run_smprt(quick_classifier, quick_classifier.encode(text), ["saliency", "random"],
                             smprt.SmoothingOptions(samples=2, noise=0.1, seed=0), cache=None)
    expected = smprt.smprt(result)
    assert shown[label_for("saliency")] == pytest.approx(expected["saliency"], abs=1e-6)
    assert CHANCE in shown.index and np.isfinite(shown[CHANCE])
    band = table.set_index("method").loc[CHANCE]
    assert band["band low"] <= shown[CHANCE] <= band["band high"]


def test_smprt_runs_as_a_job_with_a_stop_that_keeps_the_finished_stages(monkeypatch, quick_classifier, sanity_cache):
    """sMPRT (minutes on a real input) shows progress and a Stop; stopped, the page says so and keeps the
    stages it finished, with no traceback and no sMPRT value (that needs the last stage)."""
    at = _open(monkeypatch, methods=["saliency", "random"])
    _type(at, "a witty film that drags")
    at.selectbox(key="sanity-smprt-preset").set_value("quick").run()
    at.number_input(key="sanity-smprt-quick-samples").set_value(400).run()
    at.button(key="sanity-smprt-run").click().run()
    assert not at.exception, at.exception
    task = at.session_state[SMPRT_TASK]
    assert not task.finished.is_set() and JOBS.is_running(task.job_id)
    at.button(key=f"{SMPRT_TASK}-stop").click().run()
    assert task.finished.wait(120) and task.stopped
    at.run()
    assert not at.exception, at.exception
    assert any(message.value.startswith("sMPRT was stopped") for message in at.info)
    assert task.result is not None and not task.result.complete
    table = next(df.value for df in at.dataframe if any(c.startswith("sMPRT") for c in df.value.columns))
    assert label_for("saliency") not in set(table["method"])  # no value without the fully randomized stage
