"""The memory model (models/memory.py): its predictions against measured peaks, the budget every pass
kind sizes its batches from, and the recovery from out-of-memory errors.

Peaks are measured in a fresh process (tests/memory_probe.py: the growth of the resident set across one pass, the
kernel's peak mark reset just before it). The out-of-memory errors are injected: a hook on the first encoder layer
raises ``torch.cuda.OutOfMemoryError`` when a batch holds more rows than a threshold, the way a too-large batch
fails on a GPU; everything else is the real model and the real passes.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import torch
from tiny_models import random_classifier, tiny_bert, tiny_tokenizer

from explainers import registry
from explainers.shared_passes import ig_pass, ig_paths
from models import memory

PROBE = Path(__file__).resolve().parents[1] / "memory_probe.py"
TOLERANCE = 0.30  # the bound on prediction vs measured peak


@pytest.fixture(autouse=True)
def fresh_limits():
    memory.forget_limits()  # what an out-of-memory error taught this process must not leak into other tests
    yield
    memory.forget_limits()


def probe(*args: str, **env: str) -> dict:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "PROBE_THREADS": "1", **env}
    done = subprocess.run([sys.executable, str(PROBE), *args], capture_output=True, text=True, env=environment,
                          timeout=900, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


# ----- the model's structure ------------------------------------------------------------------------------------
def base_shape(**changes) -> memory.Shape:
    from transformers import BertConfig

    return replace(memory.shape_of(BertConfig()), **changes)


def test_attention_costs_memory_quadratically_only_where_the_scores_are_materialized():
    eager, fused = base_shape(quadratic=True), base_shape(quadratic=False)
    # eager: heads x n scores per token and layer, so per token the bytes grow linearly in n (total: quadratic)
    grown = memory.bytes_per_token(eager, 512, "forward") - memory.bytes_per_token(eager, 128, "forward")
    assert grown == pytest.approx(eager.element * eager.heads * (512 - 128))
    # SDPA's fused kernels keep no scores: the same bytes per token at any length (measured flat, module docstring)
    assert memory.bytes_per_token(fused, 512, "backward") == memory.bytes_per_token(fused, 128, "backward")
    # the double backward always runs under eager attention (attack.py): quadratic whatever the shape says
    assert memory.bytes_per_token(fused, 512, "double_backward") == memory.bytes_per_token(eager, 512,
                                                                                             "double_backward")


def test_backward_keeps_every_layer_and_half_precision_halves_it():
    shape = base_shape(quadratic=False)
    forward, backward = memory.bytes_per_token(shape, 256, "forward"), memory.bytes_per_token(shape, 256, "backward")
    per_layer = shape.element * (memory.SAVED_HIDDEN * shape.hidden + shape.intermediate)
    assert backward == pytest.approx(forward + shape.layers * per_layer)  # the formula of the module's table
    assert memory.bytes_per_token(replace(shape, element=2), 256, "backward") == pytest.approx(backward / 2)
    assert memory.bytes_per_token(shape, 256, "double_backward") > backward
    with pytest.raises(ValueError, match="pass kind"):
        memory.bytes_per_token(shape, 256, "sideways")


def test_the_budget_is_EXWB_MEMORY_GB_and_every_pass_kind_sizes_its_batches_from_it(monkeypatch):
    classifier = random_classifier()
    monkeypatch.setenv("EXWB_MEMORY_GB", "0.001")  # about 1 MB
    assert memory.budget_bytes("cpu") == int(0.001 * 2 ** 30)
    shape = classifier.memory_shape
    for kind in memory.PASS_KINDS:
        expected = max(1, int(0.001 * 2 ** 30 // memory.bytes_per_token(shape, 40, kind)) // 40)
        assert classifier.rows_per_batch(40, 10 ** 6, kind, within_batch_tokens=False) == min(expected, 10 ** 6)
    backward, forward = (classifier.rows_per_batch(40, 10 ** 6, kind, within_batch_tokens=False)
                         for kind in ("backward", "forward"))
    assert backward < forward  # a gradient batch is smaller than a forward one under the same budget
    # one row is the smallest batch there is, whatever the budget
    assert classifier.rows_per_batch(10 ** 5, 8, "double_backward") == 1
    monkeypatch.setenv("EXWB_MEMORY_GB", "zero")
    with pytest.raises(ValueError, match="EXWB_MEMORY_GB must be a positive number"):
        memory.budget_bytes("cpu")


# ----- predicted vs measured peaks --------------------------------------------------------------------------------
@pytest.mark.slow  # each peak is measured in a fresh process
@pytest.mark.parametrize("size, rows, length", [("tiny", 64, 128), ("base", 2, 512)])
def test_the_predicted_peak_is_within_30_percent_of_the_measured_one(size, rows, length):
    measured = probe("pass", size, "forward,backward", str(rows), str(length))
    for kind in ("forward", "backward"):
        found = measured[kind]
        assert found["peak_bytes"] > 0, kind
        ratio = found["predicted_bytes"] / found["peak_bytes"]
        assert 1 - TOLERANCE <= ratio <= 1 + TOLERANCE, (kind, found)


@pytest.mark.slow
@pytest.mark.parametrize("method, gigabytes", [
    ("integrated_gradients", "0.75"), ("smoothgrad", "0.75"), ("leave_one_out", "0.75"),
    # one 512-token row of the attack's double backward needs ~1.6 GB on BERT-base (measured): the smallest batch
    ("attack", "2"),
])
def test_methods_on_a_bert_base_size_model_with_512_tokens_stay_within_a_low_budget(method, gigabytes):
    measured = probe("method", "base", method, EXWB_MEMORY_GB=gigabytes)
    assert measured["tokens"] >= 500
    assert 0 < measured["peak_bytes"] <= measured["budget_bytes"], measured
    if method in ("integrated_gradients", "smoothgrad"):
        # without the budget the batch would not have fit it: the budget decided the batch
        from transformers import BertConfig

        shape = replace(memory.shape_of(BertConfig()), quadratic=False)
        assert memory.predicted_bytes(shape, 4, measured["tokens"], "backward") > measured["budget_bytes"]


# ----- out of memory ------------------------------------------------------------------------------------------------
class InjectedOutOfMemory:
    """Raise CUDA's out-of-memory error when a batch reaching the first encoder layer has more than ``rows`` rows."""

    def __init__(self, classifier, rows: int):
        self.rows, self.failures = rows, 0
        layer = classifier.model.bert.encoder.layer[0]
        self.handle = layer.register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, _module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        if hidden.shape[0] > self.rows:
            self.failures += 1
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory (injected: {hidden.shape[0]} rows)")

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.handle.remove()


def twin_classifiers():
    """Two classifiers around the same random weights (separate logits caches)."""
    from models import TextClassifier

    plain = random_classifier()
    other = TextClassifier(tiny_bert(seed=0), tiny_tokenizer(), name="tiny-random-0-twin", device="cpu")
    return plain, other


def test_an_out_of_memory_forward_is_halved_retried_remembered_and_recorded():
    plain, failing = twin_classifiers()
    encoding = plain.encode("the movie was excellent and the music was long but fun")
    expected = registry.create("leave_one_out").explain(plain, encoding).word_scores
    wide = failing.max_batch_tokens
    with InjectedOutOfMemory(failing, rows=3) as injected:
        scores = registry.create("leave_one_out").explain(failing, encoding).word_scores
        np.testing.assert_allclose(scores, expected, rtol=1e-5, atol=1e-6)  # the same result as in one batch
        assert injected.failures >= 1
        assert failing.max_batch_tokens < wide  # remembered: later batches start under the limit
        failures = injected.failures
        registry.create("leave_one_out", operator="pad").explain(failing, encoding)
        assert injected.failures == failures  # ... and no longer fail
    record = failing.input_details(encoding)["out_of_memory"]
    assert record["forward"]["halvings"] >= 1 and record["forward"]["limit_tokens"] < wide
    from models import TextClassifier

    wider = TextClassifier(tiny_bert(hidden=64), tiny_tokenizer(), name="tiny-64", device="cpu")
    assert "out_of_memory" not in wider.input_details(encoding)  # another model shape learned nothing


def test_an_out_of_memory_gradient_pass_is_halved_and_equals_the_unbatched_result():
    plain, failing = twin_classifiers()
    encoding = plain.encode("the movie was excellent and the music was long but fun")
    params = registry.create("integrated_gradients", n_steps=24, internal_batch_size=24).params
    target = int(plain.proba_of(encoding).argmax())
    expected = ig_pass(plain, encoding, target, params)  # all 24 path points in one batch
    with InjectedOutOfMemory(failing, rows=5) as injected:
        path = ig_pass(failing, encoding, target, params)
    assert injected.failures >= 1
    torch.testing.assert_close(path.attribution, expected.attribution, rtol=1e-4, atol=1e-6)
    assert path.delta == pytest.approx(expected.delta, abs=1e-5)
    assert memory.notes_for(failing.memory_shape, failing.device)["backward"]["limit_tokens"] <= 12 * encoding.n_tokens


def test_dataset_ig_paths_recover_from_out_of_memory_without_losing_inputs():
    plain, failing = twin_classifiers()
    encodings = [plain.encode(text) for text in ("the movie was excellent", "a long old film", "fun music")]
    targets = [0, 1, 0]
    params = registry.create("integrated_gradients", n_steps=8).params
    expected = ig_paths(plain, encodings, targets, params)
    with InjectedOutOfMemory(failing, rows=6) as injected:
        paths = ig_paths(failing, encodings, targets, params)
    assert injected.failures >= 1 and len(paths) == 3
    for path, reference in zip(paths, expected):
        torch.testing.assert_close(path.attribution, reference.attribution, rtol=1e-4, atol=1e-6)


def test_other_errors_are_not_mistaken_for_out_of_memory():
    assert memory.is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory"))
    assert memory.is_out_of_memory(RuntimeError("[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't "
                                                "allocate memory: you tried to allocate 123 bytes"))
    assert memory.is_out_of_memory(MemoryError())
    assert not memory.is_out_of_memory(RuntimeError("shape mismatch"))
    calls = []

    def failing(rows):
        calls.append(rows)
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        memory.run_halving(failing, 8, 10, base_shape(), "cpu", "backward")
    assert calls == [8]  # not retried
