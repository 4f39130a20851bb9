"""Value zeroing (Mohebbi et al. 2023) against a direct re-computation: the value projection of layer l replaced by
a module that zeroes token j's row, the whole model rerun with ``output_hidden_states``, and the cosine distances
taken with scipy; then the method's scores against the rollout of the row-normalized matrices, by hand."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.spatial.distance import cosine
from tiny_models import wide_three_class

from explainers import create
from explainers.methods.value_zeroing import value_zeroing_matrices

TEXT = "the movie was excellent and the music was long"


class ZeroRow(torch.nn.Module):
    """Wraps a value projection; its output's row ``token`` is set to zero (the value vector v_j = 0)."""

    def __init__(self, inner, token):
        super().__init__()
        self.inner, self.token = inner, token

    def forward(self, hidden):
        out = self.inner(hidden)
        keep = torch.ones(out.shape[1], 1)
        keep[self.token] = 0.0
        return out * keep


@pytest.fixture(scope="module")
def classifier():
    return wide_three_class()


def direct_matrices(classifier, encoding):
    model = classifier.model
    ids = torch.tensor([encoding.input_ids])
    types = None if encoding.token_type_ids is None else torch.tensor([encoding.token_type_ids])
    with torch.no_grad():
        reference = model(input_ids=ids, token_type_ids=types, output_hidden_states=True).hidden_states
    layers = model.bert.encoder.layer
    n = encoding.n_tokens
    out = np.zeros((len(layers), n, n))
    for l, layer in enumerate(layers):
        value = layer.attention.self.value
        for j in range(n):
            layer.attention.self.value = ZeroRow(value, j)
            try:
                with torch.no_grad():
                    zeroed = model(input_ids=ids, token_type_ids=types, output_hidden_states=True).hidden_states
            finally:
                layer.attention.self.value = value
            for i in range(n):
                out[l, i, j] = cosine(zeroed[l + 1][0, i].double().numpy(), reference[l + 1][0, i].double().numpy())
    return out


def test_matrices_equal_the_direct_recomputation(classifier):
    encoding = classifier.encode(TEXT)
    expected = direct_matrices(classifier, encoding)
    got = value_zeroing_matrices(classifier, encoding, rows_per_batch=4)  # several batches
    assert expected.max() > 1e-3  # zeroing a value moves the representations: not a vacuous comparison
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


def test_scores_are_the_rolled_out_row_of_the_cls_token(classifier):
    encoding = classifier.encode(TEXT)
    matrices = direct_matrices(classifier, encoding)
    normalized = matrices / matrices.sum(axis=-1, keepdims=True)
    rolled = normalized[1] @ normalized[0]
    explanation = create("value_zeroing").explain(classifier, encoding)
    np.testing.assert_allclose(explanation.token_scores, rolled[0], rtol=1e-4, atol=1e-7)
    last = create("value_zeroing", aggregation="last-layer").explain(classifier, encoding)
    np.testing.assert_allclose(last.token_scores, normalized[1][0], rtol=1e-4, atol=1e-7)
    assert not explanation.signed and explanation.token_scores.sum() == pytest.approx(1.0)


def test_concurrent_runs_on_one_model_do_not_see_each_others_hooks(classifier):
    """The app runs methods in background threads on one model; hooks are global to the model, so each run's hooks
    act only on its own thread's forward passes (value zeroing and ALTI side by side give their lone results)."""
    from concurrent.futures import ThreadPoolExecutor

    encoding = classifier.encode(TEXT)
    alone = {m: create(m).explain(classifier, encoding).token_scores for m in ("value_zeroing", "alti")}
    with ThreadPoolExecutor(4) as pool:
        futures = [(m, pool.submit(lambda m=m: create(m).explain(classifier, encoding).token_scores))
                   for m in ("value_zeroing", "alti") * 3]
        for method, future in futures:
            np.testing.assert_allclose(future.result(), alone[method], rtol=1e-6, atol=1e-9)
