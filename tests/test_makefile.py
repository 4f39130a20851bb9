"""`make run` starts Streamlit without a file watcher; `make dev` watches the project but not .venv (issue 20)."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from conftest import ROOT

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _dry_run(target: str) -> str:
    """The commands `make` would run (``-n``: nothing runs), continuation lines joined."""
    result = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True)
    return result.stdout.replace("\\\n", " ")


def _streamlit_line(target: str) -> str:
    return next(line for line in _dry_run(target).splitlines() if "streamlit run app.py" in line)


def test_make_run_does_not_watch_files():
    assert "--server.fileWatcherType none" in _streamlit_line("run")
    assert "runOnSave" not in _streamlit_line("run")


def test_make_dev_watches_the_project_but_not_the_venv():
    line = _streamlit_line("dev")
    assert "--server.fileWatcherType auto" in line and "--server.runOnSave true" in line
    assert "--server.folderWatchBlacklist .venv" in line
