"""The masked-LM filler sizes its batches from the memory model and recovers from out-of-memory errors.

The error is injected the way a too-large batch raises it on a GPU: a hook on the first encoder layer raises
``torch.cuda.OutOfMemoryError`` when a batch holds more rows than a threshold. The halved run must give what each
input gives alone (one row per batch: the unbatched result), and the budget (EXWB_MEMORY_GB) must bound every
batch by the memory model's own formula."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tiny_models import tiny_masked_lm
from tolerances import float32_tolerance

from models import memory
from models.mlm import MaskedLMFiller

INPUTS = ["the movie was excellent and fun", ("a long film", "the story was good"),
          "it is very quite rather long short old new", "dull", "the music was long but fun", "a good old film"]
POSITIONS = [2, 1, 7, 0, 3, 1]


@pytest.fixture()
def tiny_mlm():
    memory.forget_limits()
    yield tiny_masked_lm()
    memory.forget_limits()


class BatchRows:
    """Records the rows of each batch reaching the first encoder layer; raises CUDA's out-of-memory error above
    ``fail_above`` rows (when given)."""

    def __init__(self, filler: MaskedLMFiller, fail_above: int | None = None):
        self.fail_above, self.rows, self.failures = fail_above, [], 0
        self.handle = filler.model.bert.encoder.layer[0].register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, _module, args, kwargs):
        hidden = args[0] if args else kwargs["hidden_states"]
        if self.fail_above is not None and hidden.shape[0] > self.fail_above:
            self.failures += 1
            raise torch.cuda.OutOfMemoryError(f"CUDA out of memory (injected: {hidden.shape[0]} rows)")
        self.rows.append(tuple(hidden.shape[:2]))

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.handle.remove()


def probabilities(results) -> list[list[float]]:
    return [[c.probability for c in candidates] for candidates in results]


def test_an_injected_out_of_memory_error_gives_the_unbatched_result(tiny_mlm):
    unbatched = [tiny_mlm.top_k([item], [position], k=4)[0] for item, position in zip(INPUTS, POSITIONS)]
    with BatchRows(tiny_mlm, fail_above=2) as injected:
        halved = tiny_mlm.top_k(INPUTS, POSITIONS, k=4)
        assert injected.failures >= 1 and max(rows for rows, _ in injected.rows) <= 2
        assert sum(rows for rows, _ in injected.rows) == len(INPUTS)  # finished rows were not run again
        failures = injected.failures
        tiny_mlm.top_k(INPUTS, POSITIONS, k=4)  # the limit is remembered: no new failure
        assert injected.failures == failures
    assert [[c.word for c in r] for r in halved] == [[c.word for c in r] for r in unbatched]
    for got, expected in zip(probabilities(halved), probabilities(unbatched)):
        np.testing.assert_allclose(got, expected, rtol=0, atol=float32_tolerance(1.0))
    note = tiny_mlm.describe()["out_of_memory"]["forward"]
    assert note["halvings"] >= 1 and note["limit_tokens"] < len(INPUTS) * 16


def test_fills_recover_from_out_of_memory_with_the_same_words(tiny_mlm):
    rows = [(words, [0] * len(words)) for words in (t.split() for t in INPUTS if isinstance(t, str))]
    masked = [{0, 2}, {1}, {0}, {2, 3}, {1, 2}]
    expected = tiny_mlm.top1_words(rows, masked)
    memory.forget_limits()
    with BatchRows(tiny_mlm, fail_above=1) as injected:
        assert tiny_mlm.top1_words(rows, masked) == expected
    assert injected.failures >= 1


def test_a_low_memory_budget_bounds_every_batch_by_the_memory_models_formula(tiny_mlm, monkeypatch):
    with BatchRows(tiny_mlm) as wide:
        tiny_mlm.top_k(INPUTS * 4, POSITIONS * 4, k=2)
    assert max(rows for rows, _ in wide.rows) > 4  # without a budget: large batches
    budget_gb = 3 * 16 * memory.bytes_per_token(tiny_mlm.memory_shape, 16) / 2 ** 30  # about 3 rows of 16 tokens
    monkeypatch.setenv("EXWB_MEMORY_GB", f"{budget_gb:.12f}")
    with BatchRows(tiny_mlm) as small:
        narrow = tiny_mlm.top_k(INPUTS * 4, POSITIONS * 4, k=2)
    for rows, width in small.rows:  # each batch's predicted peak within the budget (or a single row)
        predicted = memory.predicted_bytes(tiny_mlm.memory_shape, rows, width)
        assert rows == 1 or predicted <= budget_gb * 2 ** 30
    assert len(small.rows) > len(wide.rows) and sum(r for r, _ in small.rows) == len(INPUTS) * 4
    first, second = probabilities(narrow)[:len(INPUTS)], probabilities(narrow)[len(INPUTS):2 * len(INPUTS)]
    np.testing.assert_allclose(first, second, rtol=0, atol=float32_tolerance(1.0))  # the same input, another batch
