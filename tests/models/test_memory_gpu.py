"""The memory model on a real CUDA device (marked ``gpu``: skipped without CUDA, run by
bench/gpu_check.sh under EXWB_DEVICE=cuda): batch sizes from the budget hold on the device's allocator, a real
out-of-memory error halves the batch and the result equals the unbatched one, and the fast mode's bf16 / fp16
explanations record their measured |dp|."""
from __future__ import annotations

import pytest
import torch
from memory_probe import LONG_TEXT, bert, letter_tokenizer

from explainers import registry
from explainers.shared_passes import ig_pass
from models import TextClassifier, memory

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: bench/gpu_check.sh runs these on a GPU machine")]


@pytest.fixture(autouse=True)
def fresh_limits():
    memory.forget_limits()
    yield
    memory.forget_limits()
    torch.cuda.set_per_process_memory_fraction(1.0)
    torch.cuda.empty_cache()


def base_classifier() -> TextClassifier:
    return TextClassifier(bert("base"), letter_tokenizer(), name="random-base", device="cuda")


def test_a_backward_batch_sized_from_the_budget_fits_it_and_matches_the_prediction(monkeypatch):
    monkeypatch.setenv("EXWB_MEMORY_GB", "1")
    classifier = base_classifier()
    encoding = classifier.encode(LONG_TEXT)
    rows = classifier.rows_per_batch(encoding.n_tokens, 64, "backward", within_batch_tokens=False)
    assert 1 <= rows < 64  # the budget, not the wish, decides
    embeds = classifier.word_embeddings(torch.tensor([encoding.input_ids], device="cuda")).repeat(rows, 1, 1)
    mask = torch.ones(embeds.shape[:2], dtype=torch.long, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    embeds = embeds.detach().requires_grad_(True)
    output = classifier.forward_embeds(embeds, mask)[:, 0].sum()
    torch.autograd.grad(output, embeds)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() - before
    assert peak <= memory.budget_bytes("cuda")
    predicted = memory.predicted_bytes(classifier.memory_shape, rows, encoding.n_tokens, "backward")
    assert 0.7 <= predicted / peak <= 1.3, (predicted, peak)


def test_a_real_out_of_memory_error_halves_the_batch_and_the_result_equals_the_unbatched_one(monkeypatch):
    classifier = base_classifier()
    encoding = classifier.encode(LONG_TEXT)
    params = registry.create("integrated_gradients", n_steps=32, internal_batch_size=32).params
    target = int(classifier.proba_of(encoding).argmax())
    reference = ig_pass(classifier, encoding, target,
                        registry.create("integrated_gradients", n_steps=32, internal_batch_size=2).params)
    # the budget believes everything fits; the device is capped at the weights + about 3 GB: 32 rows x 512 tokens
    # of BERT-base's backward (~9 GB) cannot
    monkeypatch.setenv("EXWB_MEMORY_GB", "1000")
    torch.cuda.empty_cache()  # the cap counts the allocator's cached blocks too
    _free, total = torch.cuda.mem_get_info()
    torch.cuda.set_per_process_memory_fraction((torch.cuda.memory_allocated() + 3 * 2 ** 30) / total)
    path = ig_pass(classifier, encoding, target, params)
    record = memory.notes_for(classifier.memory_shape, classifier.device)
    assert record is not None and record["backward"]["halvings"] >= 1
    torch.testing.assert_close(path.attribution, reference.attribution, rtol=1e-3, atol=1e-5)


def test_fast_mode_on_the_gpu_records_its_measured_dp_and_metrics_stay_full_precision():
    classifier = base_classifier()
    fast = classifier.fast_variant()
    assert fast.autocast_dtype in (torch.bfloat16, torch.float16)
    encoding = fast.encode(LONG_TEXT)
    explanation = registry.create("integrated_gradients", n_steps=8).explain(fast, encoding)
    recorded = explanation.provenance["input"]["precision"]
    assert recorded["mode"] == "fast" and recorded["autocast"] in ("bfloat16", "float16")
    expected = float(abs(fast.proba_of(encoding) - classifier.proba_of(encoding)).max())
    assert recorded["max_abs_dp_vs_full"] == pytest.approx(expected, abs=1e-12)
    assert classifier.input_details(encoding)["precision"]["mode"] == "full"  # what metrics use
