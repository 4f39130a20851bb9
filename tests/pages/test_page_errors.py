"""No traceback ever reaches a user: the real app.py, run with a page that raises, shows a short message with a log
id, and the server log holds the traceback under the same id. Streamlit's own control flow (st.stop, st.rerun)
still works through the handler."""
from __future__ import annotations

import logging
import re
import shutil

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

SECRET_PATH = "/srv/secret/models/private-weights.bin"
BOOM = f'''import streamlit as st
st.title("Boom")
st.write("before the error")
raise RuntimeError("could not open {SECRET_PATH}")
'''
STOPS = '''import streamlit as st
st.title("Stops")
if not st.session_state.get("reran"):
    st.session_state["reran"] = True
    st.rerun()
st.write("after a rerun")
st.stop()
st.write("never shown")
'''


@pytest.fixture()
def app_with_pages(tmp_path, monkeypatch):
    """A copy of app.py beside an app_pages folder of test pages (the real handler, the real navigation)."""
    def build(**pages: str) -> AppTest:
        shutil.copy(ROOT / "app.py", tmp_path / "app.py")
        (tmp_path / "app_pages").mkdir()
        for number, (name, source) in enumerate(pages.items(), start=1):
            (tmp_path / "app_pages" / f"{number}_{name}.py").write_text(source)
        return AppTest.from_file(str(tmp_path / "app.py"), default_timeout=60)
    monkeypatch.setenv("EXWB_RAISE_PAGE_ERRORS", "0")  # the tests set it; a user's server does not
    return build


def test_a_page_that_raises_shows_a_short_message_and_logs_the_traceback(app_with_pages, caplog):
    at = app_with_pages(Boom=BOOM)
    with caplog.at_level(logging.ERROR, logger="explanation_workbench.pages"):
        at.run()
    assert not at.exception  # no exception element: no traceback, no server path
    (error,) = at.error
    match = re.fullmatch(r"Something went wrong on this page; the details are in the server log \(id ([0-9a-f]{8})\)\..*",
                         error.value, flags=re.S)
    assert match, error.value
    page = " ".join(str(element.proto) for element in at.main)
    assert SECRET_PATH not in page and "Traceback" not in page and "RuntimeError" not in page
    assert [m.value for m in at.markdown] == ["before the error"]  # what the page drew before it failed stays
    (record,) = [r for r in caplog.records if r.name == "explanation_workbench.pages"]
    assert match.group(1) in record.getMessage() and record.exc_info[0] is RuntimeError
    assert SECRET_PATH in caplog.text and "Traceback" in caplog.text  # the details are in the log


def test_st_rerun_and_st_stop_pass_through_the_handler(app_with_pages):
    at = app_with_pages(Stops=STOPS)
    at.run()
    assert not at.exception and not at.error
    assert [m.value for m in at.markdown] == ["after a rerun"]


def test_the_browser_gets_no_error_details_even_outside_the_handler():
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["client"]["showErrorDetails"] == "none"
