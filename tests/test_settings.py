"""Every EXWB_* variable is read in settings.py, booleans through its one parser: EXWB_DISK_CACHE=False
turns the disk cache off; the data folder a Ray worker uses is the driver's, as an absolute path."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import settings
from evaluation.runs import ray_executor
from explainers import create
from explainers.cache import ExplanationCache, explain_cached
from explainers.shared_passes import sharing_on

# every folder and script of the project but settings.py itself and the tests
PROJECT_CODE = ("corpora", "models", "explainers", "evaluation", "ui", "app_pages", "commands", "workbench", "bench",
                "cli.py", "app.py")


def _exwb_reads(tree: ast.AST) -> list[int]:
    """Lines that read an EXWB_* variable: os.environ.get / os.environ[...] / os.getenv / `in os.environ`, named by
    a literal or by a module constant holding one (writing a worker's environment is not reading)."""
    constants = {target.id for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and str(node.value.value).startswith("EXWB_")
                 for target in node.targets if isinstance(target, ast.Name)}

    def names_exwb(node) -> bool:
        return ((isinstance(node, ast.Constant) and str(node.value).startswith("EXWB_"))
                or (isinstance(node, ast.Name) and node.id in constants))

    def is_environ(node) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ" or \
            isinstance(node, ast.Name) and node.id == "environ"

    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and names_exwb(node.args[0]):
            function = node.func
            if isinstance(function, ast.Attribute) and (
                    function.attr == "getenv" or function.attr in ("get", "pop") and is_environ(function.value)):
                lines.append(node.lineno)
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environ(node.value) \
                and names_exwb(node.slice):
            lines.append(node.lineno)
        elif isinstance(node, ast.Compare) and names_exwb(node.left) and any(is_environ(c) for c in node.comparators):
            lines.append(node.lineno)
    return lines


def test_no_exwb_variable_is_read_outside_settings():
    readers = []
    for name in PROJECT_CODE:
        path = settings.ROOT / name
        for file in ([path] if path.is_file() else sorted(path.rglob("*.py"))):
            readers += [f"{file.relative_to(settings.ROOT)}:{number}"
                        for number in _exwb_reads(ast.parse(file.read_text(), filename=str(file)))]
    assert readers == []


def test_the_reader_check_sees_every_way_of_reading():
    code = """import os
from os import environ
NAME = "EXWB_X"
a = os.environ.get("EXWB_A")
b = os.getenv(NAME)
c = environ["EXWB_C"]
d = "EXWB_D" in os.environ
os.environ["EXWB_E"] = "1"
env = {"EXWB_F": "1"}
"""
    assert _exwb_reads(ast.parse(code)) == [4, 5, 6, 7]


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
