"""How the tests derive a float tolerance (`abs=1e-9` failed on a fresh Intel Xeon machine).

The models compute in float32. ``EPS32`` = 2**-23 ~ 1.19e-7 is the gap between float32 numbers at 1, so a
float32 value v carries an error of up to |v| * EPS32 / 2 from its last rounding alone. Two computations that
are the same mathematics but not the same operations round differently:

- a forward pass of one input alone and of the same input inside a batch (other lengths, other padding),
- the same batch on another CPU or thread count, whose vector kernels add the terms of a matmul in
  another order (the README's test command failed on a fresh Xeon; it passed on this EPYC).

Their difference is a number of float32 units in the last place (ulps) of the size of the quantity, not a
fixed absolute number. Measured here: the tiny keyword BERT's logits, a batch of 64 against one input at a
time, differ by 4.8e-7 at |logit| 2.4, i.e. 2 ulps; ``REORDERED_ULPS`` allows 64 times that for deeper
models and wider vector units. A sum of n float32 terms is bounded by n ulps of its largest term
(``sum_tolerance``).

Where the computation is really identical (same function, same inputs, same batch, same process: a cached
result, a seeded rerun, a replay of the same batch), tests keep exact equality: a difference there is a bug.
Results computed in float64 from the same float64 inputs (statistics, rank correlations, rollout of given
matrices, ROAR areas) keep their tight float64 tolerances.

Audit: every comparison of float32 model outputs computed two ways uses these helpers, in
tests/evaluation/faithfulness/{test_random_band,test_bias,test_curves,test_faithfulness_dataset}.py,
tests/evaluation/{roar/test_masking,sanity/test_sanity_one_input}.py, tests/models/{test_classifier,
test_mlm_filler}.py and tests/explainers/{test_explainer_core,methods/test_gradient_methods,
methods/test_perturbation_methods,methods/test_attention_ensemble}.py. Sampling approximations (Shapley
sampling, KernelSHAP, SmoothGrad vs exact values) keep tolerances sized by their sampling error, not by float32.
"""
from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np
import pytest
import torch

EPS32 = float(np.finfo(np.float32).eps)  # 1.19e-07
REORDERED_ULPS = 128  # float32 ulps between two orders of the same float32 sums (batching, kernels, threads)


def float32_tolerance(scale=1.0, ulps: float = REORDERED_ULPS) -> float:
    """Absolute tolerance for a float32 result of about ``scale`` (a number or an array: its largest |value|)
    computed two mathematically equal ways, e.g. batched and one at a time. Probabilities and the faithfulness
    metrics built from them (differences, means and areas of probabilities) have scale 1."""
    return float(ulps * EPS32 * max(_size(scale), float(np.finfo(np.float32).tiny)))


def sum_tolerance(n_terms: int, scale=1.0) -> float:
    """A float32 sum of ``n_terms`` values of at most ``scale`` (e.g. a softmax row summing to 1): n ulps."""
    return max(1, n_terms) * EPS32 * _size(scale)


def log2_odds_tolerance(probabilities) -> float:
    """A difference of two log2-odds log2(p / (1 - p)) of float32 probabilities: each p is off by up to
    ``float32_tolerance(1)``, which moves its log2-odds by that over p (1 - p) ln 2 (steepest at the most
    extreme p given)."""
    p = np.asarray(probabilities, dtype=np.float64)
    slope = 1.0 / (np.clip(p * (1 - p), EPS32, None) * math.log(2))
    return 2 * float32_tolerance(1.0) * float(slope.max())


def _size(scale) -> float:
    """The largest |value| of a number, array or (CPU) tensor."""
    return float(np.max(np.abs(np.asarray(scale, dtype=np.float64))))


@contextmanager
def torch_threads(threads: int):
    """This process computes with ``threads`` torch threads, as the workers it is compared with do: bit identity
    needs the same count, since another splits float32 sums differently (1 against 2 threads moved 31 of 48 cell
    values by up to 1.2e-7 on one study; docs/guarantees.md)."""
    before = torch.get_num_threads()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EXWB_THREADS", str(threads))  # read again wherever a model loads (runtime.configure_torch)
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)
