"""`make run` starts Streamlit without a file watcher; `make dev` watches the project but not .venv."""
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


def test_make_serve_runs_shared_mode_with_the_apps_upload_cap():
    """the shared server takes no server path from a browser, caps uploads at EXWB_UPLOAD_MB (Streamlit's
    own cap, before the app sees the file), shows no error details and watches no files."""
    line = _streamlit_line("serve")
    assert line.startswith("EXWB_SHARED=1 ")
    assert "EXWB_THREADS=${EXWB_THREADS:-1} " in line  # one torch thread per call unless the admin says otherwise
    assert "--server.fileWatcherType none" in line and "--client.showErrorDetails none" in line
    assert "--server.maxUploadSize $(EXWB_SHARED=1 " in line and "settings.upload_mb()" in line


def test_make_test_fast_selects_by_markers_and_make_lint_runs_both_checkers():
    pytest_line = next(line for line in _dry_run("test-fast").splitlines() if "-m pytest" in line)
    for marker in ("slow", "training", "e2e", "ray", "integration"):
        assert f"not {marker}" in pytest_line
    lint = _dry_run("lint")
    assert "-m ruff check" in lint and "-m mypy" in lint
    assert "make lint" in (ROOT / ".ci" / "run").read_text()  # CI runs the static checks before the tests
