"""The one cache lock (models/file_lock.py): a second holder waits for the first, and a model build that waited
finds the model the first holder made instead of building it again (two builds of one model at once wrote the same
``.partial`` folder: one of them failed with a missing manifest)."""
from __future__ import annotations

import json
import threading
import time

from models import prepare
from models.file_lock import exclusive


def test_a_second_holder_waits_until_the_first_releases(tmp_path):
    path, order = tmp_path / "x.lock", []
    with exclusive(path):
        waiter = threading.Thread(target=lambda: exclusive_then(path, order))
        waiter.start()
        time.sleep(0.3)
        order.append("first done")
    waiter.join(timeout=30)
    assert order == ["first done", "second in"]


def exclusive_then(path, order):
    with exclusive(path):
        order.append("second in")


def test_a_build_that_waited_for_another_returns_the_model_it_made(isolated_cache):
    recipe = prepare.RECIPES["default-quick"]
    folder = prepare.models_dir() / f"default-quick-{recipe.key}"
    found = []
    with exclusive(prepare.models_dir() / f".default-quick-{recipe.key}.lock"):  # "another process" is building
        builder = threading.Thread(target=lambda: found.append(prepare.prepare("default-quick", log=lambda _: None)))
        builder.start()
        time.sleep(0.5)
        assert builder.is_alive() and not found  # it waits: nothing built, nothing returned yet
        folder.mkdir(parents=True)
        (folder / "manifest.json").write_text(json.dumps({"name": "default-quick"}))  # the other build finished
    builder.join(timeout=60)
    assert found == [folder]  # returned at once, without training (a build takes minutes)
