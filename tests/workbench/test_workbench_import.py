"""Importing the library face changes nothing in the process: no environment variable, no matplotlib
backend, no Streamlit; its figures leave pyplot's figure list alone. Run in a fresh interpreter each."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

PROBE = r"""
import json, os, sys
import matplotlib
matplotlib.use("svg")  # a user's own backend choice, which the library must keep
# third-party imports first: torch sets TORCHINDUCTOR_CACHE_DIR and scikit-learn KMP_* variables on their own import;
# the test is about what the project's code adds
import torch, transformers, torch._dynamo, sklearn, scipy.stats, pandas, captum
before = dict(os.environ)
import matplotlib.pyplot as plt
import workbench
after = dict(os.environ)
changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
print(json.dumps({"changed": changed, "backend": matplotlib.get_backend(), "streamlit": "streamlit" in sys.modules,
                  "figures": plt.get_fignums(), "all": sorted(workbench.__all__)}))
"""


def run_probe(code: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE",
                                                            "OMP_WAIT_POLICY", "TOKENIZERS_PARALLELISM")}
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_importing_the_face_changes_no_environment_no_backend_and_loads_no_streamlit():
    seen = run_probe(PROBE)
    assert seen["changed"] == []
    assert seen["backend"] == "svg"
    assert seen["streamlit"] is False
    assert {"explain", "load_model", "Explanations", "load", "faithfulness", "from_ferret", "from_inseq",
            "dataset"} <= set(seen["all"])


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_a_figure_from_the_face_leaves_pyplot_alone(keyword_classifier):
    code = PROBE.replace("print(json.dumps", "from tiny_models import keyword_classifier\n"
                         "e = workbench.explain(keyword_classifier(), 'an excellent film', methods=['saliency'])\n"
                         "figure = e.figure(); png = figure.savefig(__import__('io').BytesIO(), format='png')\n"
                         "print(json.dumps")
    code = f"import sys; sys.path.insert(0, {str(ROOT / 'tests')!r})\n" + code
    seen = run_probe(code)
    assert seen["figures"] == [] and seen["backend"] == "svg" and seen["changed"] == []
