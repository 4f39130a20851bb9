"""Test set-up: offline hub, deliberate torch threads, tiny models built in code, the quick default model.

Markers: ``integration`` tests use the prepared ``default-quick`` MiniLM (``make test`` prepares it first;
the fixture builds it if it is missing), ``e2e`` tests drive the real app in headless Chromium.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(ROOT / "tests"))  # after ROOT: the project packages win over same-named test folders
os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers is imported: a hub miss would cost ~50 s
os.environ.setdefault("EXWB_DISK_CACHE", "0")  # tests never write into the user's explanation cache
os.environ.setdefault("EXWB_RAISE_PAGE_ERRORS", "1")  # a broken page fails its test (app.py shows users a message)
os.environ.setdefault("EXWB_THREADS", "1")  # tests share 2 cores with a server and a browser (stack-probe.md s. 6)

import pytest  # noqa: E402

import settings  # noqa: E402

settings.prepare_runtime()


def pytest_configure(config):
    config.addinivalue_line("markers", "integration: uses the prepared default-quick MiniLM model")
    config.addinivalue_line("markers", "e2e: drives the real Streamlit app in headless Chromium")
    config.addinivalue_line("markers", "slow: takes more than a few seconds")


@pytest.fixture(scope="session")
def keyword_classifier():
    from tiny_models import keyword_classifier as build

    return build()


@pytest.fixture(scope="session")
def random_classifier():
    from tiny_models import random_classifier as build

    return build()


@pytest.fixture(scope="session")
def quick_classifier():
    """The real MiniLM default, quick variant (prepared by `make test`; built here if missing)."""
    from models import load_classifier
    from models.prepare import find_prepared, prepare

    if find_prepared("default-quick") is None:
        prepare("default-quick")
    return load_classifier("default-quick")


@pytest.fixture()
def quick_cache(quick_classifier, tmp_path, monkeypatch):
    """A fresh cache that holds only the prepared quick model (linked, not copied)."""
    from models.prepare import find_prepared

    models = tmp_path / "cache" / "models"
    models.mkdir(parents=True)
    prepared = find_prepared("default-quick")
    (models / prepared.name).symlink_to(prepared)
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    return models


@pytest.fixture()
def isolated_cache(tmp_path, monkeypatch):
    """A fresh cache directory for tests that write to the cache."""
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture()
def one_slot_shared_mode(monkeypatch, tmp_path):
    """Shared mode with one job slot and a quota of one running and one queued job per session, in a fresh cache."""
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EXWB_SHARED", "1")
    monkeypatch.setenv("EXWB_JOB_SLOTS", "1")
    monkeypatch.setenv("EXWB_QUOTA_RUNNING", "1")
    monkeypatch.setenv("EXWB_QUOTA_QUEUED", "1")
