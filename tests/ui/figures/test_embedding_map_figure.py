"""The embedding map's figure: every point carries its example index (what a selection reports back), the
colour groups follow the table, and a selection event is read back to indices in both of Streamlit's shapes."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from ui.figures.embedding_map import embedding_figure, selected_indices

FRAME = pd.DataFrame({"index": [0, 1, 2, 3], "text": ["a", "b", "c", "d" * 100],
                      "gold_label": ["neg", "pos", None, "pos"], "predicted_label": ["neg", "neg", "pos", "pos"],
                      "confidence": [0.9, 0.6, 0.7, 0.99],
                      "correct": pd.array([True, False, None, True], dtype="boolean")})
COORDS = np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 3.0], [3.0, 4.0]])


def points(figure) -> dict[str, list[int]]:
    return {trace.name: [int(c[0]) for c in trace.customdata] for trace in figure.data}


def test_points_carry_their_index_and_colour_by_the_table():
    assert points(embedding_figure(FRAME, COORDS, "correctness", ("x", "y"))) == {"correct": [0, 3], "wrong": [1],
                                                                                  "?": [2]}
    assert points(embedding_figure(FRAME, COORDS, "slice", ("x", "y"), {1, 2})) == {"outside": [0, 3],
                                                                                    "in the slice": [1, 2]}
    by_gold = embedding_figure(FRAME, COORDS, "gold_label", ("x", "y"))
    assert points(by_gold) == {"neg": [0], "pos": [1, 3], "?": [2]}
    trace = next(t for t in by_gold.data if t.name == "pos")
    assert list(trace.x) == [1.0, 3.0] and list(trace.y) == [2.0, 4.0]
    continuous = embedding_figure(FRAME, COORDS, "confidence", ("x", "y"))
    assert list(continuous.data[0].marker.color) == [0.9, 0.6, 0.7, 0.99]


def test_selection_events_are_read_back_to_indices():
    event = {"selection": {"points": [{"customdata": [3]}, {"customdata": [1]}, {"customdata": [3]}]}}
    assert selected_indices(event) == [1, 3]
    assert selected_indices(SimpleNamespace(selection=SimpleNamespace(points=[{"customdata": [2]}]))) == [2]
    assert selected_indices(None) == [] and selected_indices({"selection": {"points": []}}) == []
