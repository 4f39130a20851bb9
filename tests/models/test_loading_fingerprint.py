"""A model's fingerprint follows its weights, not the way it was named (a dataset run that names a
prepared model by its folder missed the cache a page had filled under the model's name)."""
from __future__ import annotations

import json
import shutil

import pytest

from models import load_classifier
from models.prepare import RECIPES, file_sha256, models_dir
from tests.tiny_models import save_tiny_architecture


def _fake_prepared(name: str, seed: int = 0):
    """A tiny model saved where ``find_prepared(name)`` looks, with the manifest ``prepare`` would write."""
    folder = models_dir() / f"{name}-{RECIPES[name].key}"
    folder.mkdir(parents=True)
    save_tiny_architecture("bert", folder, seed=seed)
    manifest = {"weights_sha256": file_sha256(folder / "model.safetensors")}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def test_a_prepared_model_has_one_fingerprint_by_name_by_path_and_as_a_copy(isolated_cache, tmp_path):
    folder = _fake_prepared("default-quick")
    copy = shutil.copytree(folder, tmp_path / "elsewhere")
    by_name = load_classifier("default-quick")
    by_path = load_classifier(str(folder))
    by_copy = load_classifier(str(copy))
    assert by_name.fingerprint == by_path.fingerprint == by_copy.fingerprint
    # the built-in fingerprint is the manifest's, as before: caches filled under the name stay valid
    assert by_name.fingerprint == json.loads((folder / "manifest.json").read_text())["weights_sha256"][:16]


def test_other_weights_in_a_folder_get_another_fingerprint(isolated_cache, tmp_path):
    folder = _fake_prepared("default-quick", seed=0)
    other = save_tiny_architecture("bert", tmp_path / "other", seed=1)
    assert load_classifier(other).fingerprint != load_classifier(str(folder)).fingerprint


@pytest.mark.integration
def test_the_real_quick_model_by_name_and_by_folder(quick_classifier):
    from models.prepare import find_prepared  # the quick_classifier fixture prepares it first

    by_path = load_classifier(str(find_prepared("default-quick")))
    assert by_path.fingerprint == quick_classifier.fingerprint
