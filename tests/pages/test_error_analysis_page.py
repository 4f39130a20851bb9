"""The Error analysis page with AppTest on the real quick classifier and a small user file: the table in
the order and with the values of a direct prediction, filters, a bad regex, an empty result, a confusion-matrix
cell, "open this example" reaching another page, explaining a slice, shortcut words, reopening, and a file without
labels."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.integration

PAGE = "app_pages/7_Error_analysis.py"
ROWS = [  # text, gold label (some deliberately wrong, so the model makes errors)
    ("a gorgeous , witty , seductive movie .", "positive"),
    ("the plot is dull and the acting is worse .", "negative"),
    ("an utterly charming film .", "negative"),
    ("a boring , lifeless mess .", "positive"),
    ("one of the best films of the year .", "positive"),
    ("it never finds its footing .", "negative"),
    ("the film is a delight from start to finish .", "positive"),
    ("tedious and far too long .", "negative"),
    ("a film with a great cast and a dull script .", "negative"),
    ("the movie is a triumph .", "negative"),
]


@pytest.fixture()
def page_cache(monkeypatch, quick_cache):
    """An isolated cache (result store, uploads) that sees the prepared default-quick classifier."""
    from explainers.cache import DEFAULT_CACHE

    monkeypatch.setenv("EXWB_MODEL", "default-quick")
    monkeypatch.setattr(DEFAULT_CACHE, "directory", None)
    return quick_cache.parent


def write_file(tmp_path, labelled: bool = True):
    import csv

    path = tmp_path / ("reviews.csv" if labelled else "unlabelled.csv")
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label", "rationale"] if labelled else ["text"])
        # the rationale marks each text's second word
        writer.writerows([(text, label, "1") for text, label in ROWS] if labelled else [(text,) for text, _ in ROWS])
    return path


def open_page(path) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.session_state["keep:errors_dataset"] = "your file"
    at.session_state["keep:dataset_file"] = f"file:{path}"
    at.run()
    at.switch_page(PAGE)
    at.run()
    assert not at.exception, at.exception
    return at


def table_of(at):
    return next(d.value for d in at.dataframe if "confidence" in d.value.columns and "text" in d.value.columns)


def direct(classifier):
    """Predictions computed straight from the classifier, one input at a time."""
    probabilities = np.array([classifier.predict_text(text) for text, _ in ROWS])
    gold = np.array([classifier.labels.index(label) for _, label in ROWS])
    return probabilities, gold


def test_table_filters_confusion_cell_and_open_an_example(page_cache, tmp_path, quick_classifier):
    from evaluation.runs.store import ResultStore

    at = open_page(write_file(tmp_path))
    assert not at.error, [e.value for e in at.error]
    probabilities, gold = direct(quick_classifier)
    predicted = probabilities.argmax(axis=1)
    wrong = predicted != gold
    assert wrong.sum() >= 2, "the file has errors to find"
    table = table_of(at)
    # confident errors first, then the rest by rising confidence
    confidence = probabilities.max(axis=1)
    order = sorted(range(len(ROWS)), key=lambda i: (not wrong[i], -confidence[i] if wrong[i] else confidence[i]))
    assert list(table["index"]) == order
    assert np.allclose(table["confidence"], confidence[order], atol=1e-5)
    assert list(table["prediction"]) == [quick_classifier.labels[p] for p in predicted[order]]
    assert [m.value for m in at.metric if m.label == "Errors"] == [str(int(wrong.sum()))]
    assert len(ResultStore().list_runs("predictions")) == 1

    at.toggle(key="errors-misclassified").set_value(True).run()
    assert set(table_of(at)["index"]) == set(np.flatnonzero(wrong))
    assert not table_of(at)["correct"].any()

    at.toggle(key="errors-regex").set_value(True).run()
    at.text_input(key="errors-search").input("(dull").run()
    assert not at.exception and any("not a valid regular expression" in e.value for e in at.error)
    at.text_input(key="errors-search").input("zzzz").run()
    assert any("No example matches" in i.value for i in at.info)
    at.text_input(key="errors-search").input("").run()
    at.toggle(key="errors-misclassified").set_value(False).run()

    # a confusion-matrix cell narrows the table to its examples
    first_error = int(np.flatnonzero(wrong)[0])
    g, p = int(gold[first_error]), int(predicted[first_error])
    at.selectbox(key="errors-cell").set_value((g, p)).run()
    assert set(table_of(at)["index"]) == set(np.flatnonzero((gold == g) & (predicted == p)))

    # open an example: it becomes the sidebar's input here and on another page
    chosen = int(table_of(at)["index"].iloc[0])
    at.selectbox(key="errors-example").set_value(chosen).run()
    at.button(key="errors-open").click().run()
    assert not at.exception, at.exception
    selection = at.session_state["selection"]
    assert selection.text == ROWS[chosen][0] and selection.example.label == gold[chosen]
    assert selection.example.rationale == tuple(int(i == 1) for i in range(len(ROWS[chosen][0].split())))
    assert at.radio(key="input_source").value == "Dataset"
    at.switch_page("app_pages/6_Counterfactuals.py")
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["selection"].text == ROWS[chosen][0]
    assert at.session_state["selection"].example.rationale == selection.example.rationale

    # a second session reopens the stored table
    again = open_page(tmp_path / "reviews.csv")
    assert any("reopened" in c.value for c in again.caption)
    assert len(ResultStore().list_runs("predictions")) == 1


def test_explain_a_slice_and_shortcut_words(page_cache, tmp_path, quick_classifier):
    at = open_page(write_file(tmp_path))
    at.number_input(key="errors-slice-n").set_value(2).run()
    at.button(key="errors-explain").click().run()
    assert not at.exception, at.exception
    markdown = [m.value for m in at.markdown]
    assert any(m.startswith("**Words pushing toward") for m in markdown)
    slice_key, summary = at.session_state["errors:slice"]
    assert len(summary.slice_ids) == 2 and summary.method == "leave_one_out"
    at.number_input(key="errors-min-count").set_value(2).run()
    shortcuts = next(d.value for d in at.dataframe if "odds_ratio" in d.value.columns)
    assert (shortcuts["examples"] >= 2).all() and shortcuts["p_value"].is_monotonic_increasing


def test_a_file_without_labels_gets_predictions_only(page_cache, tmp_path):
    at = open_page(write_file(tmp_path, labelled=False))
    assert not at.exception, at.exception
    assert any("needs labels" in i.value for i in at.info)
    assert len(table_of(at)) == len(ROWS)
    assert not [c for c in at.get("plotly_chart")]  # no confusion matrix without labels


def test_work_above_the_autorun_budget_waits_for_a_click(page_cache, tmp_path, monkeypatch):
    from evaluation.runs.store import ResultStore

    monkeypatch.setenv("EXWB_AUTORUN_SECONDS", "0")
    at = open_page(write_file(tmp_path))
    assert any(i.value.startswith(f"Predicting {len(ROWS)} examples takes about") for i in at.info)
    assert not ResultStore().list_runs("predictions") and not at.metric
    at.button(key="errors-predict").click().run()
    assert not at.exception, at.exception
    assert len(table_of(at)) == len(ROWS) and ResultStore().list_runs("predictions")[0]["status"] == "done"
    at.toggle(key="errors-misclassified").set_value(True).run()  # the stored table: no second click
    assert not at.exception and len(table_of(at)) < len(ROWS)


def test_save_a_slice_and_reopen_it(page_cache, tmp_path, quick_classifier):
    at = open_page(write_file(tmp_path))
    at.toggle(key="errors-misclassified").set_value(True).run()
    shown = table_of(at)
    at.button(key="errors-slice-save").click().run()
    assert any("name" in e.value for e in at.error)  # no name yet: a message, nothing saved
    at.text_input(key="errors-slice-name").input("my errors").run()
    at.button(key="errors-slice-save").click().run()
    assert not at.exception, at.exception
    saved = next(d.value for d in at.dataframe if "accuracy" in d.value.columns and "name" in d.value.columns)
    row = saved.iloc[0]
    assert row["name"] == "my errors" and row["examples"] == len(shown) and row["errors"] == len(shown)
    reopened = next(d.value for d in at.dataframe if list(d.value.columns) == ["text", "gold_label",
                                                                              "predicted_label", "confidence"])
    assert sorted(reopened["text"]) == sorted(shown["text"])
