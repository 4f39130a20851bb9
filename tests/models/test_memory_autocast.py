"""The memory model under the fast mode's autocast (bf16 / fp16 on a GPU as on AMX CPUs): float32 weights
under bf16 autocast keep much of their activations in float32 (layer norms, softmax, the residual stream), so the
model counts AUTOCAST_ELEMENT bytes per value, not 2; weights stored in bf16 do halve them. Checked against the
peak measured in a fresh process (tests/memory_probe.py) on a BERT-base-size model, bf16 autocast on this CPU."""
from __future__ import annotations

import pytest
import torch
from memory_probe import bert
from test_memory import TOLERANCE, probe

from models import memory


def test_autocast_counts_mixed_precision_and_half_precision_weights_count_half():
    model = bert("tiny")
    assert memory.shape_of(model).element == 4
    assert memory.shape_of(model, torch.bfloat16).element == memory.AUTOCAST_ELEMENT  # autocast over float32
    assert memory.shape_of(model.to(torch.bfloat16)).element == 2  # the weights themselves in bf16
    assert memory.shape_of(model, torch.float16).element == 2  # autocast to fp16 over bf16 weights: no float32 left


@pytest.mark.slow
def test_the_autocast_prediction_is_within_30_percent_of_the_measured_peak_on_bert_base():
    measured = probe("pass", "base", "forward,backward", "4", "256", "sdpa", "bfloat16")
    for kind, found in measured.items():
        ratio = found["predicted_bytes"] / found["peak_bytes"]
        assert 1 - TOLERANCE <= ratio <= 1 + TOLERANCE, (kind, found)
