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
    backward = measured["backward"]
    assert 1 - TOLERANCE <= backward["predicted_bytes"] / backward["peak_bytes"] <= 1 + TOLERANCE, backward
    # a forward's peak under autocast is small (~40 MB here) and its resident-set measure moves by a quarter between
    # runs (37-46 MB, the same command); the model counts 3.5 bytes per value where most of a forward's working set
    # is bf16, so it over-predicts (1.07-1.34x at 4 rows, 1.46-1.6x at 16): batches sized safely, never too large
    forward = measured["forward"]
    assert 1 - TOLERANCE <= forward["predicted_bytes"] / forward["peak_bytes"] <= 1.7, forward
