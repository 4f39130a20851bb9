"""The app's top-level handler: no traceback is ever shown to a user.

A page that raises shows one short message with an id; the full traceback goes to the server log under the same
id, so an admin finds it from what the user reports. Streamlit's own control flow (``st.stop``, ``st.rerun``,
``st.switch_page``) raises ``StopException`` / ``RerunException``; they derive from ``BaseException`` and are
re-raised untouched. Exceptions outside a page run (a widget callback) are left to ``client.showErrorDetails =
"none"`` in ``.streamlit/config.toml``: the browser gets a generic message, the console the rest.

``EXWB_RAISE_PAGE_ERRORS=1`` (the tests set it) lets the exception through, so a broken page fails its test.
"""
from __future__ import annotations

import logging
import secrets
from collections.abc import Callable

import streamlit as st
from streamlit.runtime.scriptrunner import RerunException, StopException

import settings

log = logging.getLogger("explanation_workbench.pages")


def run_guarded(run_page: Callable[[], object]) -> None:
    """Run the page; on an exception show a short message with an id and log the traceback with that id."""
    try:
        run_page()
    except (StopException, RerunException):
        raise  # Streamlit's control flow, not an error
    except Exception as error:
        if settings.raise_page_errors():
            raise
        error_id = secrets.token_hex(4)
        log.error("page error %s: %s", error_id, type(error).__name__, exc_info=error)
        st.error(f"Something went wrong on this page; the details are in the server log (id {error_id}). Try "
                 f"another input or reload the page; if it happens again, give the id to whoever runs this server.",
                 icon=":material/error:")
