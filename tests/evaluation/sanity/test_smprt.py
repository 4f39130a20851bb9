"""sMPRT: with one sample it is the plain MPRT; the denoised map equals a direct loop over whole-model copies with the
same noise; the noise is applied (and only to copies); the headline value equals scipy's Spearman of |scores|."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from scipy import stats
from tolerances import float32_tolerance

from evaluation.metric import METRICS
from evaluation.sanity import one_input, smprt
from explainers import create

TEXT = "the film was excellent and the music fun"


def test_one_sample_is_the_plain_mprt(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    methods = ["saliency", "leave_one_out"]
    plain = one_input.run_sanity(keyword_classifier, encoding, methods, cache=None, chance_draws=5).frame()
    smooth = smprt.run_smprt(keyword_classifier, encoding, methods, smprt.SmoothingOptions(samples=1, noise=0.0),
                             cache=None, chance_draws=5).frame()
    for measure in ("spearman", "spearman_abs", "top_k"):
        assert np.allclose(smooth[measure].to_numpy(), plain[measure].to_numpy(), equal_nan=True)
    # a noise magnitude with one sample changes nothing either: the last (only) sample is noise-free (Quantus)
    noisy_one = smprt.run_smprt(keyword_classifier, encoding, ["saliency"], smprt.SmoothingOptions(samples=1),
                                cache=None, chance_draws=5).frame()
    assert np.allclose(noisy_one["spearman"], plain[plain["method"] == "saliency"]["spearman"], equal_nan=True)


def test_the_average_equals_a_direct_loop_over_noisy_model_copies(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    options = smprt.SmoothingOptions(samples=4, noise=0.2, seed=3)
    inner = create("saliency")
    smoothed = smprt.Smoothed(inner, options, keyword_classifier).explain(keyword_classifier, encoding, 1)

    # independently: a full deep copy of the model per sample, the input's embedding rows shifted by the same draws
    rows = sorted(set(encoding.input_ids))
    draws = smprt.noise_draws(keyword_classifier, encoding, options)
    table = keyword_classifier.model.get_input_embeddings().weight.detach().double().numpy()
    assert draws.shape == (3, len(rows), table.shape[1])
    span = table[rows].max() - table[rows].min()
    assert draws.std() == pytest.approx(0.2 * span, rel=0.15)  # 3 x rows x 32 draws: sampling error ~ 3 %
    by_hand = []
    for sample in range(options.samples):
        model = copy.deepcopy(keyword_classifier.model)
        if sample < options.samples - 1:
            with torch.no_grad():
                model.get_input_embeddings().weight[rows] += torch.as_tensor(draws[sample], dtype=torch.float32)
        copy_ = keyword_classifier.with_model(model, f"by-hand-{sample}")
        by_hand.append(inner.explain(copy_, encoding, 1).word_scores)
    expected = np.mean(by_hand, axis=0)
    assert smoothed.word_scores == pytest.approx(expected, abs=float32_tolerance(expected))
    # the noise was applied: the denoised map is not the plain gradient
    plain = inner.explain(keyword_classifier, encoding, 1).word_scores
    assert not np.allclose(smoothed.word_scores, plain, atol=1e-4)
    assert smoothed.provenance["smoothing"]["samples"] == 4


def test_the_shared_model_is_not_touched(keyword_classifier):
    before = keyword_classifier.model.get_input_embeddings().weight.detach().clone()
    fingerprint = keyword_classifier.fingerprint
    encoding = keyword_classifier.encode(TEXT)
    smprt.Smoothed(create("saliency"), smprt.SmoothingOptions(samples=3), keyword_classifier).explain(
        keyword_classifier, encoding, 1)
    assert torch.equal(keyword_classifier.model.get_input_embeddings().weight, before)
    assert keyword_classifier.fingerprint == fingerprint


def test_smprt_value_is_spearman_of_absolute_smoothed_maps(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    result = smprt.run_smprt(keyword_classifier, encoding, ["saliency", "random"], smprt.SmoothingOptions(samples=3),
                             cache=None, chance_draws=5)
    values = smprt.smprt(result)
    for method in ("saliency", "random"):
        first = result.stages[0].explanations[method].word_scores
        last = result.stages[-1].explanations[method].word_scores
        assert values[method] == pytest.approx(stats.spearmanr(np.abs(first), np.abs(last)).statistic, abs=1e-12)
    assert not METRICS["sanity_smprt"].higher_is_better and METRICS["sanity_smprt"].family == "sanity"
    independent = one_input.run_sanity(keyword_classifier, encoding, ["random"], mode="independent", cache=None,
                                       chance_draws=2)
    with pytest.raises(ValueError, match="cascading"):
        smprt.smprt(independent)
