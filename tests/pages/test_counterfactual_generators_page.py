"""The generators on the pages, with AppTest on the real quick classifier: the Counterfactuals page's ones (HotFlip
and the word replacer; their flips classified afresh by the model give the label shown; "Use as input" makes a flip
every page's input) and Error analysis's embedding map and counterfactual slice."""
from __future__ import annotations

import numpy as np
import pytest
from test_counterfactuals_page import TEXT, _open, page_cache  # noqa: F401 (the fixture)
from test_error_analysis_page import open_page, write_file
from test_error_analysis_page import page_cache as errors_cache  # noqa: F401

pytestmark = pytest.mark.integration


def test_generators_list_flips_that_repredict_and_become_the_input(monkeypatch, page_cache, quick_classifier):
    at = _open(monkeypatch)
    at.radio(key="cf-gen-generator").set_value("word-replacer").run()
    at.text_area(key="cf-gen-rules").input("dull -> great | superb\nsuperb -> awful").run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "changes" in d.value.columns and "flipped" in d.value.columns)
    assert len(table) == 3
    for row in table.itertuples():
        predicted = quick_classifier.labels[int(np.argmax(quick_classifier.predict_text(row.text)))]
        assert predicted == row.prediction and row.flipped == (row.prediction != row.original_prediction)
    at.radio(key="cf-gen-generator").set_value("hotflip").run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "changes" in d.value.columns and "flipped" in d.value.columns)
    assert 1 <= len(table) <= 3 and set(table["generator"]) == {"hotflip"}
    flipped = table[table["flipped"]]
    if len(flipped):  # a flip becomes the sidebar's typed text
        at.button(key="cf-gen-use-0").click().run()
        assert not at.exception, at.exception
        assert at.radio(key="input_source").value == "Your text"
        assert at.text_area(key="text").value == flipped.iloc[0]["text"]


def test_error_analysis_shows_the_embedding_map_and_a_counterfactual_slice(errors_cache, tmp_path):  # noqa: F811
    at = open_page(write_file(tmp_path))
    charts = [c for c in at.get("plotly_chart")]
    assert len(charts) >= 2  # the confusion matrix and the map
    assert at.selectbox(key="errors-map-projection").value == "pca"
    at.selectbox(key="errors-map-colour").set_value("correctness").run()
    assert not at.exception, at.exception
    at.radio(key="errors-gen-generator").set_value("word-replacer").run()
    at.text_area(key="errors-gen-rules").input("dull -> delightful\ncharming -> dreadful").run()
    at.button(key="errors-gen-run").click().run()
    assert not at.exception, at.exception
    table = next(d.value for d in at.dataframe if "changes" in d.value.columns)
    assert set(table["generator"]) == {"word-replacer"} and len(table) >= 1


def test_deletion_grid_on_the_counterfactuals_page(monkeypatch, page_cache, quick_classifier):  # noqa: F811
    at = _open(monkeypatch)
    grid = next(d.value for d in at.dataframe if "removed" in d.value.columns and "flipped" in d.value.columns)
    words = TEXT.split()
    assert len(grid) == len(words) + 1
    row = grid.iloc[3]  # the third word removed
    probabilities = quick_classifier.predict_text(" ".join(words[:2] + words[3:]))
    assert row["removed"] == words[2] and row["prediction"] == quick_classifier.labels[int(np.argmax(probabilities))]
    at.number_input(key="cf-grid-width").set_value(2).run()
    assert not at.exception, at.exception
    grid = next(d.value for d in at.dataframe if "removed" in d.value.columns and "flipped" in d.value.columns)
    assert len(grid) == len(words)  # n - 1 spans of two words, and the original
