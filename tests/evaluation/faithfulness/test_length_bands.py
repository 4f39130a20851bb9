"""The deletion curves' rows run in bands of neighbouring lengths (comp + suff at ferret's settings
padded 42 % of its tokens): the bands are the cheapest split (against every split enumerated), and the banded
logits are those of one padded batch within float32."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from tolerances import float32_tolerance

from evaluation.faithfulness.curves import score_rows
from evaluation.faithfulness.length_bands import length_bands, length_grouped_logits
from models.metering import metered
from models.perturb import perturb


def split_cost(lengths: np.ndarray, bands: list[tuple[int, int]], overhead: int) -> int:
    return sum(int(np.sum((lengths >= low) & (lengths <= high))) * high + overhead for low, high in bands)


def every_split(lengths: np.ndarray):
    values = sorted(set(lengths.tolist()))
    for cuts in itertools.product((False, True), repeat=len(values) - 1):
        bands, first = [], values[0]
        for value, following, cut in zip(values, values[1:], cuts):
            if cut:
                bands.append((first, value))
                first = following
        yield bands + [(first, values[-1])]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("overhead", [0, 5, 64])
def test_bands_are_the_cheapest_split(seed, overhead):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(3, 15, size=rng.integers(1, 30))  # at most 12 distinct: 2^11 splits to enumerate
    bands = length_bands(lengths, overhead)
    covered = np.concatenate([np.flatnonzero((lengths >= low) & (lengths <= high)) for low, high in bands])
    assert sorted(covered.tolist()) == list(range(len(lengths)))  # every row in exactly one band
    assert split_cost(lengths, bands, overhead) == min(split_cost(lengths, b, overhead) for b in every_split(lengths))


def test_far_apart_lengths_get_their_own_bands():
    lengths = np.array([4] * 20 + [30] * 20)
    assert length_bands(lengths, 64) == [(4, 4), (30, 30)]  # one padded batch: 40 x 30 tokens, 560 of them padding
    assert length_bands(np.array([29, 30, 30]), 64) == [(29, 30)]  # a few padded tokens cost less than a pass


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def test_banded_logits_are_one_batchs_within_float32(smooth):
    encoding = smooth.encode("the movie was excellent and the music was long but the acting was not good at all")
    rng = np.random.default_rng(3)
    keep = rng.random((60, encoding.n_words)) < rng.random((60, 1))  # deletion: rows of many lengths
    batch = perturb(smooth, encoding, keep, "delete")
    assert len({len(ids) for ids in batch.input_ids}) > 5
    flat = smooth.predict_logits(batch)
    with metered() as meter:
        banded = length_grouped_logits(smooth, batch)
    np.testing.assert_allclose(banded, flat, rtol=0, atol=float32_tolerance(flat))
    assert meter.forward_passes == len(keep)


def test_score_rows_runs_each_distinct_row_once_in_bands(smooth):
    encoding = smooth.encode("the movie was excellent and the music was long but the acting was not good at all")
    keep = np.vstack([np.arange(encoding.n_words) >= k for k in range(encoding.n_words)] * 2)  # each row twice
    logits0 = smooth.logits_of(encoding)
    with metered() as meter:
        logits = score_rows(smooth, encoding, keep, "delete", None, logits0)
    assert meter.forward_passes == encoding.n_words - 1  # the first row keeps every word: the input's logits
    flat = smooth.predict_logits(perturb(smooth, encoding, keep, "delete"))
    np.testing.assert_allclose(logits, flat, rtol=0, atol=float32_tolerance(flat))
