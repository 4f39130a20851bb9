"""The 'Show run' box of the Faithfulness, Plausibility and Sanity dataset tabs (ui/widgets/run_picker.py) with
AppTest: a run started in this session is the one shown, and the user's own pick stands afterwards."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest


def _page():
    import streamlit as st

    from ui.widgets.run_picker import run_picker

    runs = [{"id": i, "title": i, "status": "finished", "done": 1, "total": 1} for i in st.session_state["runs"]]
    st.write(run_picker(runs, st.session_state.get("started"), key="show-run"))


def test_a_started_run_is_shown_and_a_pick_stands():
    at = AppTest.from_function(_page)
    at.session_state["runs"] = ["old-b", "old-a"]
    at.run()
    assert at.selectbox(key="show-run").value == "old-b"  # nothing started: the newest run
    at.selectbox(key="show-run").set_value("old-a").run()
    # Start: the new run appears and is the one shown, although the box held another value
    at.session_state["runs"] = ["new", "old-b", "old-a"]
    at.session_state["started"] = "new"
    at.run()
    assert at.selectbox(key="show-run").value == "new" and at.markdown[0].value == "new"
    # the user looks at an older run: it stays shown on the next reruns
    at.selectbox(key="show-run").set_value("old-b").run()
    at.run()
    assert at.selectbox(key="show-run").value == "old-b"
    # a run deleted from the store falls back to the started one
    at.session_state["runs"] = ["new", "old-a"]
    at.run()
    assert at.selectbox(key="show-run").value == "new" and not at.exception


def _shared_store_page():
    import streamlit as st

    from ui.widgets.run_picker import run_picker

    runs = [{"id": i, "title": i, "status": status, "done": 1, "total": 2, "config": {"model": model}}
            for i, status, model in (("mine-new", "finished", "default"), ("theirs", "failed", "someone/else"),
                                     ("mine-old", "finished", "default"))]
    st.write(run_picker(runs, None, key="show-run", model="default"))


def test_the_shared_store_shows_the_current_models_runs_unless_asked_for_all():
    at = AppTest.from_function(_shared_store_page)
    at.run()
    assert at.selectbox(key="show-run").options == ["mine-new · finished · 1/2", "mine-old · finished · 1/2"]
    assert any("1 run(s) of other models hidden" in c.value for c in at.caption)
    at.toggle(key="show-run-all").set_value(True).run()
    assert at.selectbox(key="show-run").options == ["mine-new · finished · 1/2 · model default",
                                                    "theirs · failed · 1/2 · model someone/else",
                                                    "mine-old · finished · 1/2 · model default"]
    assert not at.caption
