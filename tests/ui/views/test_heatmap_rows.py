"""The Heatmaps page's rows (ui/views/heatmaps.py ``Rows``) are laid out before the methods run and each row is drawn
as soon as its method finishes, not all at the end; AppTest with a tiny model built in code."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

METHODS = ("saliency", "leave_one_out")  # no shared pass: they run one after the other


def _rows_page():
    import streamlit as st

    from explainers.cache import cached_only
    from explainers.choices import MethodChoice
    from explainers.registry import create
    from ui.views import heatmaps

    methods = ("saliency", "leave_one_out")
    classifier = st.session_state["classifier"]
    encoding = classifier.encode(st.session_state["text"])
    seen = st.session_state["seen"] = []

    class Watched(heatmaps.Rows):
        def show(self, method_id, result):  # which methods are computed when a row is drawn
            if method_id not in self.drawn:
                seen.append((method_id, [m for m in methods
                                         if cached_only(create(m), classifier, encoding, None) is not None]))
            super().show(method_id, result)

    choices = [MethodChoice(m, None, {}) for m in methods]
    rows = Watched(methods, "word", "none", False)
    results = heatmaps.compute(choices, classifier, encoding, None, auto_run_seconds=1e9, rows=rows)
    rows.finish(results)


def test_each_row_is_drawn_when_its_method_finishes(keyword_classifier):
    at = AppTest.from_function(_rows_page, default_timeout=120)
    at.session_state["classifier"] = keyword_classifier
    at.session_state["text"] = "a good film with a dull and bad ending for once"  # explained nowhere else
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["seen"] == [("saliency", ["saliency"]),  # drawn while leave-one-out had not run yet
                                        ("leave_one_out", list(METHODS))]
    rows = [h.proto.body for h in at.get("html") if '<div class="xw-row">' in h.proto.body]
    assert len(rows) == 2 and not at.get("progress")  # every row drawn once; the bar is gone at the end
    markdown = [m.value for m in at.markdown]
    assert markdown.index("#### Gradient-based") < markdown.index("#### Perturbation-based")
    # a rerun: both served from the cache, drawn before anything would run
    at.run()
    assert at.session_state["seen"] == [("saliency", list(METHODS)), ("leave_one_out", list(METHODS))]
    assert len([h for h in at.get("html") if '<div class="xw-row">' in h.proto.body]) == 2
