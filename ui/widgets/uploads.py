"""Files the user uploads, kept on disk: dataset runs read them by path (in background jobs and on Ray workers).

Each file lies in a folder named by a hash of its content (two different files never collide, the same file
is stored once) under the user's own file name, so every message about it names the file the user knows.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import settings


def save_upload(upload) -> Path:
    """Write a Streamlit ``UploadedFile`` under the cache; returns its path (ending in the user's file name)."""
    content = upload.getvalue()
    name = Path(upload.name).name  # the browser's name only, never a path
    if name in ("", ".", ".."):
        name = "upload" + Path(upload.name).suffix
    path = settings.cache_dir() / "uploads" / hashlib.sha256(content).hexdigest()[:16] / name
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return path
