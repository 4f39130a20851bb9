"""The wheel works outside the checkout: build it, install it into a fresh folder, and run the README's
first Python block from a directory that is not the checkout, on the prepared quick model."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile

import pytest
from conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def readme_first_python_block() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Use it from Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_wheel_installed_in_a_fresh_folder_runs_the_readme_block(quick_classifier, tmp_path):
    wheels, target, elsewhere = tmp_path / "wheels", tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(ROOT)], check=True,
                   timeout=300)
    wheel = next(wheels.glob("explanation_workbench-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "assets/cards/saliency.md" in names and "assets/schema/explanation-workbench-1.json" in names
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True, timeout=300)
    env = {**os.environ, "PYTHONPATH": str(target), "EXWB_THREADS": "1"}
    code = readme_first_python_block() + "\nimport workbench, settings\nprint('FROM', workbench.__file__)\n"
    done = subprocess.run([sys.executable, "-c", code], cwd=elsewhere, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"FROM {target}" in done.stdout  # the installed copy ran, not the checkout
    assert "comprehensiveness-eraser" in done.stdout
    assert (elsewhere / "explanations.json").is_file()
