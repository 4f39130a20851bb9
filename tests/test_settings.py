"""Every EXWB_* variable is read in settings.py, booleans through its one parser (issue 31): EXWB_DISK_CACHE=False
turns the disk cache off; the data folder a Ray worker uses is the driver's, as an absolute path."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import settings
from evaluation.runs import ray_executor
from explainers import create
from explainers.cache import ExplanationCache, explain_cached
from explainers.shared_passes import sharing_on

PROJECT_CODE = ("corpora", "models", "explainers", "evaluation", "ui", "app_pages", "commands", "cli.py", "app.py")
ENV_READ = re.compile(r"""(environ\.get\(|environ\[|getenv\()\s*["']EXWB_""")


def test_no_exwb_variable_is_read_outside_settings():
    readers = []
    for name in PROJECT_CODE:
        path = settings.ROOT / name
        for file in ([path] if path.is_file() else sorted(path.rglob("*.py"))):
            readers += [f"{file.relative_to(settings.ROOT)}:{number}" for number, line in
                        enumerate(file.read_text().splitlines(), start=1) if ENV_READ.search(line)]
    assert readers == []


@pytest.mark.parametrize("word, on_disk", [("False", False), ("false", False), ("0", False), (" OFF ", False),
                                           ("no", False), ("True", True), ("1", True), ("", True)])
def test_the_disk_cache_follows_every_spelling_of_the_flag(keyword_classifier, tmp_path, monkeypatch, word, on_disk):
    monkeypatch.setenv("EXWB_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("EXWB_DISK_CACHE", word)
    cache = ExplanationCache()  # reads the settings at each use, as the app's cache does
    explain_cached(create("leave_one_out"), keyword_classifier, keyword_classifier.encode("an excellent film"), 1,
                   cache=cache)
    assert bool(list(tmp_path.rglob("*.json"))) is on_disk


def test_pass_sharing_reads_the_same_booleans(monkeypatch):
    for word, expected in (("False", False), ("OFF", False), ("yes", True), ("", True)):
        monkeypatch.setenv("EXWB_SHARE_PASSES", word)
        assert sharing_on() is expected


def test_a_ray_worker_gets_the_drivers_data_folder_as_an_absolute_path(tmp_path, monkeypatch):
    # the default: shared/data beside this checkout, which is not beside the cluster's uploaded copy of the project
    monkeypatch.delenv("EXWB_DATA_DIR", raising=False)
    default = (settings.ROOT.parent / "shared" / "data").resolve()
    if not default.is_dir():
        pytest.skip("no shared/data beside this checkout")
    remote = ray_executor.runtime_env("ray://head:10001")
    assert remote["working_dir"] == str(settings.ROOT) and remote["env_vars"]["EXWB_DATA_DIR"] == str(default)
    # a relative setting is made absolute on the driver (the worker's working folder is another)
    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("EXWB_DATA_DIR", "data")
    assert ray_executor.runtime_env("auto")["env_vars"]["EXWB_DATA_DIR"] == str(tmp_path.resolve() / "data")
    # a folder that exists only on the cluster's nodes travels as written
    monkeypatch.setenv("EXWB_DATA_DIR", "/mnt/cluster/data")
    assert ray_executor.runtime_env("auto")["env_vars"]["EXWB_DATA_DIR"] == "/mnt/cluster/data"
    assert Path(ray_executor.runtime_env(None)["env_vars"]["EXWB_DATA_DIR"]) == Path("/mnt/cluster/data")
