"""Files the user uploads, kept on disk: dataset runs read them by path (in background jobs and on Ray workers).

Each file lies in a folder named by a hash of its content (two different files never collide, the same file
is stored once) under the user's own file name, so every message about it names the file the user knows.

Limits of a shared server, checked before the file is parsed: one file at most ``settings.upload_mb()`` MB
(EXWB_UPLOAD_MB), and one browser session at most ``settings.upload_session_mb()`` MB in all
(EXWB_UPLOAD_SESSION_MB; shared mode only by default). The row limit (EXWB_UPLOAD_ROWS) is checked while the
file is read (``corpora.user_file``). The folder is ``settings.uploads_dir()``, the one ``corpora.file_access``
lets a shared server read.
"""
from __future__ import annotations

import hashlib
from collections.abc import MutableMapping
from pathlib import Path

import streamlit as st

import settings
from corpora import DataError

SESSION_KEY = "uploads:bytes"  # {content hash: size} of this session's uploads


def _mb(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


def save_upload(upload, taken: MutableMapping[str, int] | None = None) -> Path:
    """Write a Streamlit ``UploadedFile`` under the cache; returns its path (ending in the user's file name).

    ``taken``: this session's uploads so far ({content hash: bytes}), counted against the session's total and
    updated. DataError, and nothing written, when the file or the session's total is over its limit."""
    size = upload.size
    limit = settings.upload_mb()
    if size > limit * 1_000_000:
        raise DataError(f"{Path(upload.name).name} is {_mb(size)}; this server takes files up to {limit:g} MB "
                        f"(EXWB_UPLOAD_MB). Keep fewer rows and upload it again.")
    content = upload.getvalue()
    digest = hashlib.sha256(content).hexdigest()[:16]
    session_limit = settings.upload_session_mb()
    if taken is not None and digest not in taken and session_limit is not None:
        total = sum(taken.values()) + size
        if total > session_limit * 1_000_000:
            raise DataError(f"This upload would bring this session's uploads to {_mb(total)}; this server takes "
                            f"{session_limit:g} MB per session (EXWB_UPLOAD_SESSION_MB). Work with the files "
                            f"uploaded already, or open the app in a new tab to start afresh.")
    name = Path(upload.name).name  # the browser's name only, never a path
    if name in ("", ".", ".."):
        name = "upload" + Path(upload.name).suffix
    path = settings.uploads_dir() / digest / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    if taken is not None:
        taken[digest] = size
    return path


def accept_upload(upload) -> str | None:
    """The dataset id (``file:<path>``) of an upload, counted against this session's total; None, with the
    message shown, when a limit refuses it."""
    try:
        path = save_upload(upload, st.session_state.setdefault(SESSION_KEY, {}))
    except DataError as error:
        st.error(str(error))
        return None
    return f"file:{path}"
