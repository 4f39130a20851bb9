"""The opt-in fast mode: reduced-precision autocast on the same weights, its measured deviation in the
provenance, never the default and never what a metric loads."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from tiny_models import save_tiny_architecture, tiny_architecture

import cli
from explainers import create
from models import load_classifier, precision
from models.classifier import TextClassifier

TEXT = "the movie was excellent , not boring"


@pytest.fixture()
def tiny() -> TextClassifier:
    model, tokenizer = tiny_architecture("bert")
    return TextClassifier(model, tokenizer, name="tiny-bert", device="cpu")


def test_the_fast_view_shares_the_weights_and_has_its_own_identity(tiny):
    fast = tiny.fast_variant(torch.bfloat16)
    assert fast.model is tiny.model and tiny.autocast_dtype is None and fast.autocast_dtype is torch.bfloat16
    assert fast.fingerprint != tiny.fingerprint  # a cached explanation never crosses precisions
    assert fast.full_precision is tiny
    assert all(p.dtype == torch.float32 for p in tiny.model.parameters())  # autocast casts per op, no copy


def test_the_provenance_gives_the_measured_deviation_from_full_precision(tiny, monkeypatch):
    # the deviation is recomputed below through the Hugging Face model itself: the classifier runs that model whole
    # (its first-token last layer sums in another order: models/first_token.py, tested in test_first_token.py)
    monkeypatch.setenv("EXWB_FULL_LAST_LAYER", "1")
    tiny = TextClassifier(tiny.model, tiny.tokenizer, name=tiny.name, device="cpu")
    encoding = tiny.encode(TEXT)
    fast = tiny.fast_variant(torch.bfloat16)
    explanation = create("leave_one_out").explain(fast, encoding)
    recorded = explanation.provenance["input"]["precision"]
    assert recorded["mode"] == "fast" and recorded["autocast"] == "bfloat16"
    # the same deviation computed another way: the Hugging Face model called directly, with and without autocast
    tensors = tiny.tensors(encoding)
    with torch.no_grad():
        full = torch.softmax(tiny.model(**tensors).logits.double(), -1)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            reduced = torch.softmax(tiny.model(**tensors).logits.double(), -1)
    expected = float((full - reduced).abs().max())
    assert recorded["max_abs_dp_vs_full"] == pytest.approx(expected, abs=1e-12)
    assert 0 < expected < 0.1  # bf16 has 8 bits of mantissa: visible, small
    assert any("Fast mode" in w for w in explanation.warnings)
    full_explanation = create("leave_one_out").explain(tiny, encoding)
    assert full_explanation.provenance["input"]["precision"]["mode"] == "full"
    assert not np.array_equal(explanation.word_scores, full_explanation.word_scores)


def test_gradient_methods_run_in_fast_mode_and_return_float32_logits(tiny):
    fast = tiny.fast_variant(torch.bfloat16)
    encoding = fast.encode(TEXT)
    tensors = fast.tensors(encoding)
    logits = fast.forward_embeds(fast.word_embeddings(tensors["input_ids"]), tensors["attention_mask"])
    assert logits.dtype == torch.float32
    explanation = create("integrated_gradients").explain(fast, encoding)
    assert np.isfinite(explanation.word_scores).all()


def test_without_native_bf16_the_fast_mode_says_so_and_stays_exact(tiny, monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: False)
    fast = tiny.fast_variant()
    assert fast.autocast_dtype is None and fast.fingerprint == tiny.fingerprint
    assert "full precision is used" in fast.warnings[-1]


def test_metrics_load_full_precision_whatever_exwb_fast_says(tmp_path, monkeypatch):
    monkeypatch.setenv("EXWB_FAST", "1")
    classifier = load_classifier(save_tiny_architecture("bert", tmp_path / "bert"), device="cpu")
    assert classifier.autocast_dtype is None


@pytest.mark.parametrize("native", [True, False])
def test_the_command_line_explains_in_fast_mode_on_request(native, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(precision, "cpu_has_bf16", lambda: native)
    folder = save_tiny_architecture("bert", tmp_path / "bert")
    arguments = ["explain", "--model", folder, "--text", TEXT, "--methods", "occlusion", "--json", "--no-cache"]
    assert cli.main(arguments + ["--fast"]) == 0
    captured = capsys.readouterr()
    recorded = json.loads(captured.out)["explanations"][0]["provenance"]["input"]["precision"]
    assert recorded["mode"] == ("fast" if native else "full")
    assert ("no native bfloat16" in captured.err) is not native
    monkeypatch.setenv("EXWB_FAST", "1")
    assert cli.main(arguments + ["--no-fast"]) == 0
    assert json.loads(capsys.readouterr().out)["explanations"][0]["provenance"]["input"]["precision"]["mode"] == "full"
