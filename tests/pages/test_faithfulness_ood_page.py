"""The Faithfulness page's paper-000 diagnostics and ROAD, with AppTest on the real quick model: Table 4 (accuracy
drop per perturbation) from a stored background run, its numbers checked against ``accuracy_drop`` on the same
examples, its CSV export, bad input; Table A1 beside a dataset run; the ROAD preset's MoRF / LeRF against
``evaluate_input``."""
from __future__ import annotations

import io

import pandas as pd
import pytest
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from test_faithfulness_page import METHODS, TEXT, _open, page_cache  # noqa: F401  (page_cache: a fixture)

pytestmark = pytest.mark.integration

DROP = "drop (points) [95 % CI]"
LIMIT, LIME_SAMPLES = 3, 5


class KeptMediaStorage(MemoryMediaFileStorage):
    """AppTest's in-memory media storage, kept after the run so a test can read what a download button serves."""
    made: list[KeptMediaStorage] = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        KeptMediaStorage.made.append(self)


@pytest.fixture()
def downloads(monkeypatch):
    KeptMediaStorage.made.clear()
    monkeypatch.setattr(app_test_module, "MemoryMediaFileStorage", KeptMediaStorage)

    def read(at, label: str) -> str:
        button = next(b for b in at.get("download_button") if b.proto.label == label)
        return KeptMediaStorage.made[-1].get_file(button.proto.url.rsplit("/", 1)[-1]).content.decode()

    return read


def _table_4(at) -> pd.DataFrame:
    return next(df.value for df in at.dataframe if DROP in df.value.columns)


def test_table_4_on_the_page_equals_accuracy_drop_and_reopens_from_the_store(monkeypatch, quick_classifier,
                                                                             page_cache, downloads):
    from corpora import load_dataset
    from evaluation.faithfulness.perturbation_shift import accuracy_drop
    from evaluation.runs.jobs import JOBS
    from models.mlm import load_filler
    from ui.views.perturbation_shift import RUN_KEY

    at = _open(monkeypatch, metrics=("eraser",))
    at.number_input(key="faith-shift-limit").set_value(LIMIT).run()
    at.number_input(key="faith-shift-lime").set_value(LIME_SAMPLES).run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert any(f"first {LIMIT} examples" in c.value and "cost model" in c.value for c in at.caption)
    assert not any(DROP in df.value.columns for df in at.dataframe)  # nothing computed before the click
    at.button(key="faith-shift-start").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state[RUN_KEY]
    JOBS.wait(run_id, timeout=240)
    assert not JOBS.is_running(run_id)
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    table = _table_4(at)
    # the same numbers as evaluation/ computes directly on the same examples, seed and LIME samples
    examples = load_dataset("sst2:dev", limit=LIMIT, label_names=quick_classifier.labels)
    direct = accuracy_drop(quick_classifier, examples, ("loo", "im", "lime"), LIME_SAMPLES, seed=0,
                           filler=load_filler())
    assert list(table["perturbation"]) == list(direct["label"])
    for (_, shown), (_, row) in zip(table.iterrows(), direct.iterrows()):
        assert shown[DROP] == f"{row['drop_points']:.2f} [{row['drop_low']:.2f}, {row['drop_high']:.2f}]"
        assert shown["accuracy (%)"] == f"{100 * row['accuracy']:.2f}"
        assert shown["perturbed accuracy (%)"] == f"{100 * row['perturbed_accuracy']:.2f}"
        assert shown["n inputs"] == LIMIT
    assert list(table["paper 000 SST"]) == ["3.52", "2.20", "16.38"]  # the paper's Table 4 beside ours
    assert any(m.value.startswith("**Reading.**") and "paper 000" in m.value for m in at.markdown)
    # the export: every scheme's numbers at full precision, the paper's figures and the provenance
    export = pd.read_csv(io.StringIO(downloads(at, "Download Table 4 (CSV)")))
    assert list(export["scheme"]) == ["loo", "im", "lime"]
    # shares of correctly classified copies (argmax counts, no float32 sums): equal up to the CSV's decimal round trip
    assert export["drop_points"].to_numpy() == pytest.approx(direct["drop_points"].to_numpy(), rel=1e-12, abs=1e-12)
    assert list(export["paper_000_drop_e-SNLI"]) == [4.92, 4.86, 25.74]
    assert set(export["run_id"]) == {run_id} and set(export["dataset"]) == {"sst2:dev"}
    # a new session with the same settings shows the stored table without a click and without a new job
    fresh = _open(monkeypatch, metrics=("eraser",))
    fresh.number_input(key="faith-shift-limit").set_value(LIMIT).run()
    fresh.number_input(key="faith-shift-lime").set_value(LIME_SAMPLES).run()
    assert RUN_KEY not in fresh.session_state
    assert _table_4(fresh).equals(table)


def test_table_4_bad_input_gets_one_line_messages(monkeypatch, quick_classifier, page_cache):
    at = _open(monkeypatch, metrics=("eraser",))
    at.number_input(key="faith-shift-limit").set_value(0).run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["The number of examples must be at least 1 (got 0)."]
    at.number_input(key="faith-shift-limit").set_value(2).run()
    at.multiselect(key="faith-shift-schemes").set_value([]).run()
    assert [e.value for e in at.error] == ["Pick at least one perturbation scheme (LOO, IM or LIME)."]
    at.multiselect(key="faith-shift-schemes").set_value(["loo"]).run()
    # a file without gold labels: the message says what to do, no traceback, no Start
    at.selectbox(key="faith-shift-ds").set_value("upload a file").run()
    at.file_uploader(key="faith-shift-ds-upload").upload("reviews.csv", b"text\na fine film\na dull film\n",
                                                          "text/csv").run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "no gold label" in errors[0] and "'label' column" in errors[0]
    assert "\n" not in errors[0]
    assert not any(b.key == "faith-shift-start" for b in at.button)


def test_table_a1_beside_a_dataset_run(monkeypatch, quick_classifier, page_cache, downloads):
    from evaluation.runs.jobs import JOBS
    from evaluation.runs.store import ResultStore
    from evaluation.suite.run_report import run_table
    from explainers import label_for
    from ui.views.faithfulness import RUN_KEY

    at = _open(monkeypatch, metrics=("deletion",))
    at.number_input(key="faith-limit").set_value(2).run()
    at.multiselect(key="faith-extra").set_value(["attribution-magnitude"]).run()
    at.button(key="faith-start").click().run()
    assert not at.exception, at.exception
    run_id = at.session_state[RUN_KEY]
    JOBS.wait(run_id, timeout=240)
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    summary = run_table(ResultStore(), run_id).set_index(["metric", "method"])
    main = next(df.value for df in at.dataframe if "Mean |attribution| per word (max-scaled) ↑" in df.value.columns)
    assert "band [" in main.loc["random baseline", "Mean |attribution| per word (max-scaled) ↑"]  # the random band
    a1 = next(df.value for df in at.dataframe if "paper 000 SST" in df.value.columns).set_index("method")
    loo = label_for("leave_one_out")
    row = summary.loc[("mean-abs-attribution", "leave_one_out")]
    assert a1.loc[loo, "mean [95 % CI]"] == f"{row['mean']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"
    assert a1.loc[loo, "n"] == 2 and a1.loc[loo, "paper 000 SST"] == "0.22 ± 0.27"
    assert pd.isna(a1.loc[label_for("saliency"), "paper 000 SST"])  # the paper reports LOOempty and IM only
    assert any("Table A1" in m.value for m in at.markdown)
    # the run's summary export carries the metric with its interval and random band
    export = pd.read_csv(io.StringIO(downloads(at, "Download the summary (CSV)"))).set_index(["metric", "method"])
    exported = export.loc[("mean-abs-attribution", "leave_one_out")]
    # the same stored values summarized twice; only the CSV's decimal round trip in between
    assert exported["mean"] == pytest.approx(row["mean"], rel=1e-12) and exported["low"] <= exported["mean"]
    assert export.loc[("mean-abs-attribution", "saliency"), "random_low"] <= \
        export.loc[("mean-abs-attribution", "saliency"), "random_high"]


def test_road_on_the_page_equals_evaluate_input_with_the_random_band(monkeypatch, quick_classifier, page_cache):
    """The ROAD preset: the MoRF / LeRF values shown equal evaluation/'s on the same explanations, with the band."""
    from evaluation.faithfulness.one_input import evaluate_input
    from explainers import create, label_for

    at = _open(monkeypatch, metrics=("road",))
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert not any("prepare-mlm" in w.value for w in at.warning)  # the filler is prepared: ROAD is kept
    encoding = quick_classifier.encode(TEXT)
    explanations = {m: create(m).explain(quick_classifier, encoding) for m in METHODS}
    direct = evaluate_input(quick_classifier, encoding, explanations, ["road-morf", "road-lerf"],
                            {"seed": 0}).table().set_index(["metric", "method"])
    table = next(df.value for df in at.dataframe if label_for("leave_one_out") in df.value.columns)
    for metric, label in (("road-morf", "ROAD MoRF (MLM-imputed) ↓"), ("road-lerf", "ROAD LeRF (MLM-imputed) ↑")):
        for method in METHODS:
            assert table.loc[label, label_for(method)].startswith(f"{direct.loc[(metric, method), 'value']:.3f}")
        band = table.loc[label, "random baseline"]
        assert band.startswith(f"{direct.loc[(metric, 'random baseline'), 'value']:.3f} [")
        assert table.loc[label, "operator"] == "MLM fill"
    # the values differ between methods or from random, so the comparison above can fail
    values = {direct.loc[("road-morf", m), "value"] for m in [*METHODS, "random baseline"]}
    assert len(values) > 1
