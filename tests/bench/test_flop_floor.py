"""bench/bench_flop_floor.py: its FLOP formula against torch's own count (``FlopCounterMode``) on a tiny BERT and on
the quick MiniLM, and its hook counter against the project's own pass meter on known workloads.

FLOP counts are integers, so they are compared exactly. ``FlopCounterMode`` has no formula for the CPU's fused
SDPA kernel, so the attention terms are checked under the eager kernel, and under SDPA the count is the
linear layers' alone."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from explainers import create
from models import metered
from models.attention_kernel import eager_attention

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("bench_flop_floor", ROOT / "bench" / "bench_flop_floor.py")
floor = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)  # registered: its dataclasses look it up
_spec.loader.exec_module(floor)


def counted(function) -> int:
    counter = FlopCounterMode(display=False)
    with counter:
        function()
    return counter.get_total_flops()


def forward_and_backward_flops(classifier, rows: int, width: int) -> tuple[int, int]:
    """torch's count of one forward on ids and of one forward + backward w.r.t. the input embeddings."""
    ids, mask = floor.random_batch(classifier, rows, width)
    model = classifier.model

    def forward():
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=mask)

    def forward_backward():
        embeds = classifier.word_embeddings(ids).detach().requires_grad_(True)
        model(inputs_embeds=embeds, attention_mask=mask).logits[:, 0].sum().backward()

    return counted(forward), counted(forward_backward)


@pytest.mark.parametrize("rows,width", [(1, 7), (5, 12), (3, 40)])
def test_formula_is_torchs_count_on_a_tiny_bert(random_classifier, rows, width):
    shape = floor.EncoderShape.of(random_classifier.model)
    assert not any(p.requires_grad for p in random_classifier.model.parameters())  # inputs-only backward
    with eager_attention(random_classifier.model):  # every matmul visible to the counter
        forward, both = forward_and_backward_flops(random_classifier, rows, width)
    assert shape.forward_flops(rows, width) == forward
    assert shape.forward_flops(rows, width) + shape.backward_flops(rows, width) == both


@pytest.mark.integration
def test_formula_is_torchs_count_on_the_quick_model(quick_classifier):
    shape = floor.EncoderShape.of(quick_classifier.model)
    rows, width = 4, 30
    with eager_attention(quick_classifier.model):
        forward, both = forward_and_backward_flops(quick_classifier, rows, width)
    assert shape.forward_flops(rows, width) == forward
    assert shape.forward_flops(rows, width) + shape.backward_flops(rows, width) == both
    # the fused SDPA kernel the model runs by default is not counted by torch: its count is the linear layers'
    sdpa_forward, _ = forward_and_backward_flops(quick_classifier, rows, width)
    assert shape.linear_flops(rows, width) == sdpa_forward
    # the attention share is the formula's 2 T d per token and layer for scores and values each, times 2
    assert shape.attention_flops(rows, width) == forward - sdpa_forward


def first_token_flops(classifier, rows: int, width: int) -> tuple[int, int]:
    """torch's count of the classifier's own first-token path (models/first_token.py): a forward on ids and a forward
    + backward on embeddings. SDPA's math backend spells the last layer's attention as matmuls torch counts."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ids, mask = floor.random_batch(classifier, rows, width)
    assert classifier.first_token.enabled

    def forward():
        with torch.inference_mode():
            classifier._encoder_logits(input_ids=ids, attention_mask=mask)

    def forward_backward():
        embeds = classifier.word_embeddings(ids).detach().requires_grad_(True)
        classifier._encoder_logits(inputs_embeds=embeds, attention_mask=mask)[:, 0].sum().backward()

    with eager_attention(classifier.model), sdpa_kernel(SDPBackend.MATH):
        return counted(forward), counted(forward_backward)


@pytest.mark.parametrize("rows,width", [(1, 7), (5, 12), (3, 40)])
def test_first_token_formula_is_torchs_count_on_a_tiny_bert(random_classifier, rows, width):
    """The last layer for [CLS] only: keys and values of every token, one query, one token's FFN (found at the merge:
    the counter missed this path and the floors were the full model's)."""
    shape = floor.EncoderShape.of(random_classifier.model)
    forward, both = first_token_flops(random_classifier, rows, width)
    assert shape.forward_flops(rows, width, first_token=True) == forward
    assert shape.forward_flops(rows, width, True) + shape.backward_flops(rows, width, True) == both
    assert forward < shape.forward_flops(rows, width)  # fewer than the full model's


@pytest.mark.integration
def test_first_token_formula_is_torchs_count_on_the_quick_model(quick_classifier):
    shape = floor.EncoderShape.of(quick_classifier.model)
    forward, both = first_token_flops(quick_classifier, 4, 30)
    assert shape.forward_flops(4, 30, first_token=True) == forward
    assert shape.forward_flops(4, 30, True) + shape.backward_flops(4, 30, True) == both


def test_counter_sees_every_batch_the_meter_counts(random_classifier):
    texts = ["the movie was good", "a film that this story had some scenes with actors and music",
             "it is very quite rather long", "old"]
    encodings = [random_classifier.encode(t) for t in texts]
    lengths = [e.n_tokens for e in encodings]
    counter = floor.PassCounter(random_classifier)
    with counter, metered() as meter:
        random_classifier.predict_logits(encodings)
    assert meter.batches == 1  # a batch this small is one chunk: padded to the longest
    assert sum(b.rows for b in counter.batches) == meter.forward_passes == len(texts)
    assert sum(b.real_tokens for b in counter.batches) == sum(lengths)
    assert sum(b.rows * b.width for b in counter.batches) == len(texts) * max(lengths)
    assert not any(b.grad for b in counter.batches)
    assert all(b.first_token == random_classifier.first_token.enabled for b in counter.batches)


def test_counter_attributes_each_methods_passes_as_its_provenance_counts(random_classifier):
    encoding = random_classifier.encode("the movie was a film that this story had some scenes")
    counter = floor.PassCounter(random_classifier)
    explanations = {}
    with counter, floor.explainers_labelled(counter):
        for method in ("saliency", "integrated_gradients", "leave_one_out"):
            explanations[method] = create(method).explain(random_classifier, encoding, target=1)
    totals = floor.totals_by_label(counter.batches, floor.EncoderShape.of(random_classifier.model))
    assert set(totals) == set(explanations)
    for method, explanation in explanations.items():
        assert totals[method].forward_rows == explanation.provenance["forward_passes"]
        assert totals[method].backward_rows == explanation.provenance["backward_passes"]
        assert totals[method].batches == explanation.provenance["batches"]
    assert totals["saliency"].backward_rows == 1
    assert totals["leave_one_out"].backward_rows == 0
    assert counter.seconds["integrated_gradients"][1] > 0  # the section's own CPU seconds


def test_projection_of_the_sample_onto_itself_is_its_count(random_classifier):
    shape = floor.EncoderShape.of(random_classifier.model)
    sentences = ["the movie was good", "a film that this story had some scenes with actors"]
    counter = floor.PassCounter(random_classifier)
    with counter, floor.explainers_labelled(counter):
        for text in sentences:
            encoding = random_classifier.encode(text)
            for method in ("integrated_gradients", "leave_one_out", "saliency"):
                create(method).explain(random_classifier, encoding, target=1)
    totals = floor.totals_by_label(counter.batches, shape)
    sample = [(e.n_tokens, e.n_words) for e in map(random_classifier.encode, sentences)]
    first_token = random_classifier.first_token.enabled
    assert all(b.first_token == first_token for b in counter.batches)
    projected, _ = floor.project_to_dev(totals, sample, sample, shape, "integrated_gradients", first_token)
    assert sum(projected.values()) == pytest.approx(sum(t.flops for t in totals.values()), rel=1e-12)
    # twice the sentences: twice the FLOPs, part by part
    doubled, _ = floor.project_to_dev(totals, sample, sample * 2, shape, "integrated_gradients", first_token)
    assert sum(doubled.values()) == pytest.approx(2 * sum(t.flops for t in totals.values()), rel=1e-12)
