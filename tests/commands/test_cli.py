"""The command line as a user runs it (a real subprocess), on the quick default model."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT


def _cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "EXWB_THREADS": "1", **(env or {})}
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          env=environment, cwd=ROOT, timeout=600)


@pytest.mark.integration
def test_explain_json_covers_every_method(quick_classifier):
    from explainers import REGISTRY

    result = _cli("explain", "--model", "default-quick", "--text", "a gorgeous , witty film", "--pair", "it is good",
                  "--methods", "all", "--json", env={"EXWB_DISK_CACHE": "0"})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["pair"] == "it is good" and set(report["prediction"]) == {"negative", "positive"}
    explained = {e["method_id"] for e in report["explanations"]}
    assert explained | set(report["skipped"]) == set(REGISTRY)
    # only methods that need a masked LM or a trained attribution model (AML: `cli.py prepare-aml`) may be skipped
    # (neither is prepared in a fresh cache), each with its reason
    assert all((REGISTRY[m].needs_mlm and "masked" in reason.lower())
               or (REGISTRY[m].trains and "prepare-aml" in reason) for m, reason in report["skipped"].items())
    for explanation in report["explanations"]:
        assert len(explanation["word_scores"]) == 8 and explanation["provenance"]["model"]["name"] == "default-quick"


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_user_errors_are_one_line_messages_with_exit_code_2(tmp_path):
    cases = [
        (["explain", "--model", "nobody/nothing", "--text", "x"], "hub access is off"),
        (["explain", "--model", str(tmp_path), "--text", "x"], "no config.json"),
        (["explain", "--model", "default-quick", "--text", "x", "--methods", "magic"], "Unknown method"),
        (["explain", "--model", "default-quick", "--text", "x", "--param", "leave_one_out.operator=shuffle"],
         "must be one of"),
    ]
    for args, message in cases:
        result = _cli(*args)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_methods_lists_parameters_and_presets():
    result = _cli("methods", "--json")
    assert result.returncode == 0, result.stderr
    rows = {row["id"]: row for row in json.loads(result.stdout)}
    assert "paper-001" in rows["integrated_gradients"]["presets"]
    assert {p["name"] for p in rows["leave_one_out"]["params"]} == {"operator", "score"}


@pytest.mark.integration
def test_prepare_is_idempotent_and_the_manifest_is_complete(quick_classifier):
    result = _cli("prepare", "--quick")
    assert result.returncode == 0 and "already prepared" in result.stdout
    manifest = quick_classifier.manifest
    assert manifest["accuracy"] >= 0.80 and manifest["meets_target"]
    for key in ("base_weights_sha256", "train_data_sha256", "seed", "hyperparameters", "library_versions",
                "eval_data", "train_examples"):
        assert manifest[key] not in (None, "")
    assert manifest["eval_examples"] == 872 and manifest["train_data"] == "sst2:train"
