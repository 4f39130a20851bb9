"""NAOPC, soft sufficiency / comprehensiveness and F-Fidelity with a contrast class read p(A) - p(B).

Each is checked two ways: against the metric's formula applied to the plain model's probability difference
computed here (every ordering of a 5-word input for NAOPC, the masked embeddings run one by one for soft, the
engine's rows for F-Fidelity) on a random 3-class model; and on a 2-class model, where p(A) - p(B) = 2 p(A) - 1, so
the normalized measures (NAOPC, soft) equal the plain ones and F-Fidelity's probability drops double.
"""
from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
import torch
from tiny_models import wide_three_class

from evaluation.faithfulness import f_fidelity, naopc, soft
from evaluation.faithfulness.curves import rank_words
from explainers import create
from explainers.scores import softmax
from models.perturb import perturbed_logits, perturbed_proba

TEXT = "awful music , not great"  # 5 words: NAOPC's bounds are exact and 5! orderings are brute-forced
# class 1 rather than class 2: the all-masked input lowers p(1) - p(2) by 0.1 on this model (soft's normalizer)
CHOSEN = {"target": 1, "contrast": 2}


@pytest.fixture(scope="module")
def three_class():
    return wide_three_class()


def contrastive(classifier, text: str, target: int | None = None, contrast="runner-up"):
    """The input, an explanation of the target (the predicted class by default) rather than the contrast class (the
    runner-up by default), and both class indices."""
    encoding = classifier.encode(text)
    explanation = create("leave_one_out", contrast=contrast).explain(classifier, encoding, target)
    target = explanation.target
    foil = explanation.provenance["target"]["contrast"]["index"]
    return encoding, explanation, target, foil


def without_contrast(explanation):
    """The same word scores, recorded as a plain (non-contrastive) explanation."""
    target = {k: v for k, v in explanation.provenance["target"].items() if k not in ("contrast", "explained_output")}
    return dataclasses.replace(explanation, provenance={**explanation.provenance, "target": target})


def margin(classifier, encoding, keep, target, foil) -> np.ndarray:
    p = softmax(perturbed_logits(classifier, encoding, np.atleast_2d(keep), "delete"))
    return p[:, target] - p[:, foil]


# ----- NAOPC -----------------------------------------------------------------------------------------------------
def test_naopc_normalizes_the_probability_difference_over_every_ordering(three_class):
    encoding, explanation, target, foil = contrastive(three_class, TEXT, 1, 2)
    n = encoding.n_words
    values = naopc.compute(three_class, encoding, explanation, None, CHOSEN)
    full = margin(three_class, encoding, np.ones(n, bool), target, foil)[0]

    def comprehensiveness_sum(order):  # sum_k d(x) - d(x without its first k words), k = 1..n
        keep = np.ones((n, n), bool)
        for k in range(n):
            keep[k:, order[k]] = False
        return float((full - margin(three_class, encoding, keep, target, foil)).sum())

    sums = {order: comprehensiveness_sum(order) for order in itertools.permutations(range(n))}
    low, high = min(sums.values()), max(sums.values())
    order = tuple(rank_words(explanation.word_scores))
    expected = (sums[order] - low) / (high - low)
    assert values["naopc-comprehensiveness"] == pytest.approx(expected, abs=1e-5)
    # sufficiency keeps the top n - k words: the comprehensiveness sum of the reversed ordering
    assert values["naopc-sufficiency"] == pytest.approx((sums[order[::-1]] - low) / (high - low), abs=1e-5)
    plain = naopc.compute(three_class, encoding, without_contrast(explanation), None, {"target": 1})
    assert plain["naopc-comprehensiveness"] != pytest.approx(values["naopc-comprehensiveness"], abs=1e-3)


def test_naopc_on_two_classes_is_unchanged_by_the_contrast(keyword_classifier):
    encoding, explanation, _, _ = contrastive(keyword_classifier, "the movie was excellent , not dull")
    with_contrast = naopc.compute(keyword_classifier, encoding, explanation, None, {"contrast": "runner-up"})
    plain = naopc.compute(keyword_classifier, encoding, without_contrast(explanation), None, {})
    for metric in ("naopc-comprehensiveness", "naopc-sufficiency"):
        assert with_contrast[metric] == pytest.approx(plain[metric], abs=1e-5)


# ----- soft sufficiency / comprehensiveness ------------------------------------------------------------------------
def test_soft_measures_read_the_probability_difference(three_class):
    encoding, explanation, target, foil = contrastive(three_class, TEXT, 1, 2)
    samples = 3
    values = soft.compute(three_class, encoding, explanation, None, {**CHOSEN, "soft_samples": samples})
    tensors = three_class.tensors(encoding)
    with torch.no_grad():
        embedded = three_class.word_embeddings(tensors["input_ids"])[0].double()

    def d(embeds) -> float:  # the plain model, one input at a time
        with torch.no_grad():
            logits = three_class.forward_embeds(embeds[None].float(), tensors["attention_mask"],
                                                tensors.get("token_type_ids"))
        p = torch.softmax(logits.double(), -1)[0]
        return float(p[target] - p[foil])

    is_word = torch.as_tensor(encoding.token_word_array >= 0)
    full, empty = d(embedded), d(embedded * ~is_word[:, None])
    room = max(0.0, full - empty)
    assert room > soft.ILL_CONDITIONED  # a well-conditioned normalizer: the values are finite and meaningful
    draws = torch.as_tensor(soft.mask_draws(0, encoding.key, samples, *embedded.shape))
    weight = soft.importance(explanation.word_scores)
    drop = {}
    for name, probability in (("comp", weight), ("suff", 1 - weight)):
        p = torch.as_tensor(soft.token_probabilities(encoding, probability))
        drop[name] = [max(0.0, full - d(embedded * (draws[i] >= p[:, None]))) for i in range(samples)]
    assert values["soft-comprehensiveness"] == pytest.approx(np.mean(drop["comp"]) / room, abs=1e-4)
    assert values["soft-sufficiency"] == pytest.approx(np.mean([room - x for x in drop["suff"]]) / room, abs=1e-4)
    assert values.details["soft-comprehensiveness"]["p_full"] == pytest.approx(full, abs=1e-5)


def test_soft_measures_on_two_classes_are_unchanged_by_the_contrast(keyword_classifier):
    encoding, explanation, _, _ = contrastive(keyword_classifier, "the movie was excellent , not dull")
    with_contrast = soft.compute(keyword_classifier, encoding, explanation, None, {"contrast": "runner-up"})
    plain = soft.compute(keyword_classifier, encoding, without_contrast(explanation), None, {})
    for metric in soft.BASE_IDS:
        assert with_contrast[metric] == pytest.approx(plain[metric], abs=1e-5)


def test_an_explanation_of_another_contrast_is_refused(three_class):
    encoding, explanation, _, _ = contrastive(three_class, TEXT, 1, 2)
    with pytest.raises(ValueError, match="same --contrast"):
        soft.compute(three_class, encoding, explanation, None, {"target": 1})
    with pytest.raises(ValueError, match="same --contrast"):
        naopc.compute(three_class, encoding, without_contrast(explanation), None, CHOSEN)


# ----- F-Fidelity -------------------------------------------------------------------------------------------------
FFID = {"ffid_model": "original", "ffid_preset": "quick", "ffid_samples": 4}


def test_ffid_reads_the_probability_difference_of_the_removed_inputs(three_class):
    encoding, explanation, target, foil = contrastive(three_class, TEXT, 1, 2)
    values = f_fidelity.compute(three_class, encoding, explanation, None, {**FFID, **CHOSEN})
    options = f_fidelity.FFidOptions(**FFID)
    draws = f_fidelity.uniform_draws(0, encoding.key, len(options.levels), options.samples, encoding.n_words)
    keep = f_fidelity.removal_rows(rank_words(explanation.word_scores), options.levels, draws, 0.5, 0.1)
    p = perturbed_proba(three_class, encoding, keep, "mask")
    p0 = softmax(three_class.logits_of(encoding)[None])[0]
    drops = (p0[target] - p0[foil]) - (p[:, target] - p[:, foil])
    per_side = drops.reshape(len(options.levels), 2, options.samples).mean(axis=2).mean(axis=0)
    assert values["ffid_plus"] == pytest.approx(per_side[0], abs=1e-5)
    assert values["ffid_minus"] == pytest.approx(per_side[1], abs=1e-5)
    label = f_fidelity.compute(three_class, encoding, explanation, None,
                               {**FFID, **CHOSEN, "ffid_score": "label"})
    holds = (p[:, target] > p[:, foil]).astype(float)
    label_drops = float(p0[target] > p0[foil]) - holds
    label_sides = label_drops.reshape(len(options.levels), 2, options.samples).mean(axis=2).mean(axis=0)
    assert label["ffid_plus"] == pytest.approx(label_sides[0], abs=1e-9)


def test_ffid_on_two_classes_doubles_the_probability_drop(keyword_classifier):
    encoding, explanation, _, _ = contrastive(keyword_classifier, "the movie was excellent , not dull")
    with_contrast = f_fidelity.compute(keyword_classifier, encoding, explanation, None,
                                       {**FFID, "contrast": "runner-up"})
    plain = f_fidelity.compute(keyword_classifier, encoding, without_contrast(explanation), None, FFID)
    for metric in ("ffid_plus", "ffid_minus"):
        assert with_contrast[metric] == pytest.approx(2 * plain[metric], abs=1e-5)
