"""MaRC (paper 002): each loss term against a direct formula, the ablation switches, special tokens, seeding,
long texts in segments, the progress hook, and the mask it learns on the keyword model."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from explainers import create
from explainers.mask_learning.kernel import kernel_mask
from explainers.mask_learning.segments import blend, blend_weights, plan_segments, whole_input
from explainers.methods.marc import (
    complement_term,
    converged,
    masked_pair,
    omega_lambda,
    omega_sigma,
    random_flips,
    segment_batch,
    sufficiency_term,
)
from models.encoding import build_encoding

LOGITS = torch.tensor([[2.0, -1.0, 0.5], [0.3, 0.2, -0.4]])  # two segments, three classes


def softmax_np(row):
    e = np.exp(np.asarray(row, dtype=np.float64) - max(row))
    return e / e.sum()


def sigmoid(z):
    return 1 / (1 + math.exp(-z))


# ----- the terms of Eq. 8 -----------------------------------------------------------------------------------
@pytest.mark.parametrize("target", [0, 2])
def test_classification_terms_match_direct_formulas(target):
    rows = LOGITS.tolist()
    p = np.mean([softmax_np(r)[target] for r in rows])  # the mean probability over segments (reference code)
    q = np.mean([sigmoid(r[target]) for r in rows])
    tol = 1e-6  # float32 logs of O(1) values
    assert float(sufficiency_term(LOGITS, target, "log-softmax")) == pytest.approx(-math.log(p), abs=tol)
    assert float(sufficiency_term(LOGITS, target, "log-sigmoid")) == pytest.approx(-math.log(q), abs=tol)
    assert float(complement_term(LOGITS, target, "log-softmax", "log-p")) == pytest.approx(math.log(p), abs=tol)
    assert float(complement_term(LOGITS, target, "log-softmax", "log-1-p")) == pytest.approx(-math.log(1 - p), abs=tol)
    assert float(complement_term(LOGITS, target, "log-sigmoid", "log-p")) == pytest.approx(math.log(q), abs=tol)
    assert float(complement_term(LOGITS, target, "log-sigmoid", "log-1-p")) == pytest.approx(-math.log(1 - q), abs=tol)


def test_regularizers_match_direct_formulas():
    masks = [torch.tensor([0.2, 0.9, 0.4]), torch.tensor([1.0, 0.0])]
    sigmas = [torch.tensor([2.0, 0.5, 3.0]), torch.tensor([1.5, 4.0])]
    expected_lambda = 0.7 * ((0.2 + 0.9 + 0.4) / 3) ** 2 + 0.7 * 0.5 ** 2  # per segment, summed
    expected_sigma = -1.2 * (np.mean(np.log([2.0, 0.5, 3.0])) + np.mean(np.log([1.5, 4.0])))
    assert float(omega_lambda(masks, 0.7)) == pytest.approx(expected_lambda, rel=1e-6)
    assert float(omega_sigma(sigmas, 1.2)) == pytest.approx(expected_sigma, rel=1e-6)


@pytest.mark.parametrize("form", ["sigma", "sigma^2"])
def test_kernel_mask_matches_eq_5_and_6(form):
    w = torch.tensor([1.2, -0.5, 2.0, 0.1])
    sigma = torch.tensor([2.0, 0.7, 1.3, 5.0])
    expected = []
    for j in range(4):
        total = 0.0
        for i in range(4):
            width = float(sigma[i]) ** 2 if form == "sigma^2" else float(sigma[i])
            total += float(w[i]) * math.exp(-((j - i) ** 2) / width)
        expected.append(sigmoid(total))
    np.testing.assert_allclose(kernel_mask(w, sigma, form).numpy(), expected, rtol=1e-6)


def test_initial_mask_is_almost_fully_on():
    # seeds-002-004.md: with sigma^2 and w = 1.2, sigma = 2, an interior word starts at sigmoid(1.2 * 3.545) = 0.986
    n = 41
    lam = kernel_mask(torch.full((n,), 1.2), torch.full((n,), 2.0), "sigma^2")
    assert float(lam[n // 2]) == pytest.approx(sigmoid(1.2 * sum(math.exp(-k * k / 4) for k in range(-20, 21))),
                                               rel=1e-6)
    assert float(lam[n // 2]) == pytest.approx(0.986, abs=1e-3)


def test_random_flips_rates_and_off_switch():
    generator = torch.Generator().manual_seed(0)
    mask = torch.full((200, 200), 0.5)
    flipped = random_flips(mask, 0.2, generator)
    # P(set to 0) = P(set to 1) = 0.2 * 0.8; binomial sd over 40,000 values ~ 0.002
    assert float((flipped == 0).float().mean()) == pytest.approx(0.16, abs=0.01)
    assert float((flipped == 1).float().mean()) == pytest.approx(0.16, abs=0.01)
    assert torch.equal(random_flips(mask, 0.0, generator), mask)


def test_early_stop_rule():
    assert converged(199, 0.3, 0.302)  # settled, 200 steps, mean < 0.45
    assert not converged(149, 0.3, 0.302)  # too early unless the mean is below 0.3
    assert converged(49, 0.25, 0.254)
    assert not converged(199, 0.5, 0.5)  # mean too high
    assert not converged(199, 0.3, 0.31)  # moved 0.01 > 1/200
    assert converged(199, 0.1, 0.11)  # below 0.2 the tolerance is 1/80


# ----- the step's inputs ------------------------------------------------------------------------------------
def test_special_tokens_are_never_masked(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent")
    batch = segment_batch(keyword_classifier, encoding, whole_input(encoding))
    special = torch.tensor(encoding.special)
    assert special.any()
    zero = [torch.zeros(encoding.n_words)]
    token_mask = batch.token_mask(zero)
    assert torch.all(token_mask[0, special] == 1) and torch.all(token_mask[0, ~special] == 0)
    # even a random flip at a special token changes nothing: the [PAD] baseline keeps [CLS] / [SEP]
    flipped = random_flips(token_mask, 0.5, torch.Generator().manual_seed(1))
    for mask in (token_mask, flipped, torch.zeros_like(token_mask)):
        kept, removed = masked_pair(batch.x, batch.b, mask)
        assert torch.equal(kept[0, special], batch.x[0, special])
        assert torch.equal(removed[0, special], batch.x[0, special])
    pad = keyword_classifier.word_embeddings(torch.tensor([keyword_classifier.tokenizer.pad_token_id]))[0]
    kept, _ = masked_pair(batch.x, batch.b, token_mask)
    assert torch.allclose(kept[0, ~special], pad.expand(int((~special).sum()), -1))


def step_terms(classifier, encoding, **switches):
    explainer = create("marc", **switches)
    batch = segment_batch(classifier, encoding, whole_input(encoding))
    masks = [torch.linspace(0.1, 0.9, encoding.n_words)]
    sigmas = [torch.linspace(1.0, 3.0, encoding.n_words)]
    with torch.no_grad():
        return explainer.objective(classifier, batch, masks, sigmas, 1, torch.Generator().manual_seed(0))


@pytest.mark.parametrize("switch,term", [("use_complement", "complement"), ("use_omega_lambda", "omega_lambda"),
                                         ("use_omega_sigma", "omega_sigma")])
def test_ablation_switches_remove_exactly_their_term(keyword_classifier, switch, term):
    encoding = keyword_classifier.encode("the movie was excellent and long")
    full = step_terms(keyword_classifier, encoding, use_noise=False)
    ablated = step_terms(keyword_classifier, encoding, use_noise=False, **{switch: False})
    assert set(full) - set(ablated) == {term}
    assert float(sum(ablated.values())) == pytest.approx(float(sum(full.values()) - full[term]), abs=1e-5)
    for name, value in ablated.items():
        assert float(value) == pytest.approx(float(full[name]), abs=1e-6)


def test_noise_switch_makes_the_step_deterministic_and_equal_to_the_clean_formula(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and long")
    quiet = step_terms(keyword_classifier, encoding, use_noise=False)
    noisy = step_terms(keyword_classifier, encoding)
    assert float(noisy["sufficiency"]) != pytest.approx(float(quiet["sufficiency"]), abs=1e-7)
    batch = segment_batch(keyword_classifier, encoding, whole_input(encoding))
    kept, _ = masked_pair(batch.x, batch.b, batch.token_mask([torch.linspace(0.1, 0.9, encoding.n_words)]))
    with torch.no_grad():
        p = torch.softmax(keyword_classifier.forward_embeds(kept, batch.attention), -1)[0, 1]
    assert float(quiet["sufficiency"]) == pytest.approx(-math.log(float(p)), abs=1e-5)


# ----- whole runs -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("text", ["excellent music and the plot of this film is rather old and quite long",
                                  "this story had some scenes with actors and music and the plot is new but it is "
                                  "excellent"])
def test_marc_keeps_the_keyword_and_drops_most_other_words(keyword_classifier, text):
    """The keyword model is a step function of the keyword (its p jumps from 0.009 to 0.991 between mask values
    0.5 and 0.7 and is flat elsewhere), so MaRC's optimum keeps the keyword just above that step: sufficiency
    and comprehensiveness are met there and Omega_lambda pushes every value down."""
    encoding = keyword_classifier.encode(text)
    explanation = create("marc", preset="paper-002").explain(keyword_classifier, encoding)
    assert explanation.target == 1
    scores = explanation.word_scores
    keyword = explanation.words.index("excellent")
    others = np.delete(scores, keyword)
    details = explanation.provenance["details"]
    assert np.argmax(scores) == keyword
    assert scores[keyword] > 0.5
    assert np.mean(others < 0.3) >= 0.8
    assert details["p_target_kept"] > 0.9 and details["p_target_complement"] < 0.1  # sufficient and comprehensive
    assert details["stop_reason"] == "converged" and details["steps"] < 900
    assert np.all((scores >= 0) & (scores <= 1)) and not explanation.signed


def test_seeded_runs_repeat_exactly(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and the music was long")
    first = create("marc", max_steps=40, seed=3).explain(keyword_classifier, encoding)
    again = create("marc", max_steps=40, seed=3).explain(keyword_classifier, encoding)
    other = create("marc", max_steps=40, seed=4).explain(keyword_classifier, encoding)
    np.testing.assert_array_equal(first.word_scores, again.word_scores)
    assert not np.array_equal(first.word_scores, other.word_scores)
    assert first.provenance["seed"] == 3


@pytest.mark.parametrize("steps", [60, pytest.param(900, marks=pytest.mark.slow)])  # the step cap after one early-stop check; converged before the cap
def test_a_run_without_hooks_gives_the_mask_of_a_run_that_reads_every_step(keyword_classifier, steps):
    """Without a progress hook MaRC reads its mask back only at the early-stop checks (overhead between the passes);
    the result must be bit-identical to a run whose hook reads the mask, the loss and the terms at every step."""
    encoding = keyword_classifier.encode("the movie was excellent and the music was long")
    seen = []
    bare = create("marc", max_steps=steps, seed=1).explain(keyword_classifier, encoding)
    hooked = create("marc", max_steps=steps, seed=1, progress=seen.append).explain(keyword_classifier, encoding)
    np.testing.assert_array_equal(bare.word_scores, hooked.word_scores)
    for key in ("steps", "stop_reason", "final_terms", "p_target_kept", "p_target_complement", "mean_mask"):
        assert bare.provenance["details"][key] == hooked.provenance["details"][key], key
    assert len(seen) == bare.provenance["details"]["steps"] >= 50  # the hook saw every step, checks included
    assert seen[-1].terms == bare.provenance["details"]["final_terms"]


def test_progress_hook_and_stop_keep_the_last_mask(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and the music was long")
    seen = []
    explainer = create("marc", progress=seen.append, should_stop=lambda: len(seen) >= 7)
    explanation = explainer.explain(keyword_classifier, encoding)
    assert [p.step for p in seen] == list(range(1, 8))
    assert explanation.provenance["details"]["steps"] == 7
    assert explanation.provenance["details"]["stop_reason"] == "stopped"
    assert any("Stopped at step 7" in w for w in explanation.warnings)
    np.testing.assert_allclose(explanation.word_scores, seen[-1].mask, rtol=1e-12)
    last = seen[-1]
    assert last.mean_mask == pytest.approx(float(np.mean(last.mask)), rel=1e-9)
    assert last.loss == pytest.approx(sum(last.terms.values()), rel=1e-5)
    assert set(last.terms) == {"sufficiency", "complement", "omega_lambda", "omega_sigma"}


def test_presets_follow_paper_and_code():
    paper = create("marc", preset="paper-002").params
    code = create("marc", preset="paper-002-code").params
    assert (paper.optimizer, paper.sigma_form, paper.complement) == ("adam", "sigma", "log-p")
    assert (code.optimizer, code.sigma_form, code.complement, code.weight_decay) == ("adamw", "sigma^2", "log-1-p",
                                                                                     0.01)
    for params in (paper, code):
        assert (params.alpha_lambda, params.alpha_sigma, params.w_init, params.sigma_init) == (1.0, 1.2, 1.2, 2.0)
        assert (params.noise, params.flip_rate, params.max_steps) == (0.03, 0.05, 900)
    assert create("marc").expensive and create("marc").needs_gradients


# ----- long texts --------------------------------------------------------------------------------------------
LONG = " ".join(["the movie was a film that had some scenes with actors and music it is very long"] * 4
                + ["this story had excellent music"] + ["the plot is rather old and quite long"] * 7)


def test_segments_cover_the_text_within_the_model_length(keyword_classifier):
    full = build_encoding(keyword_classifier.tokenizer, LONG, None, 10 ** 9)
    limit = keyword_classifier.max_length
    assert full.n_tokens > 2 * limit
    segments = plan_segments(full, limit, overlap_tokens=12)
    assert len(segments) >= 3
    assert segments[0].words.start == 0 and segments[-1].words.stop == full.n_words
    for a, b in zip(segments, segments[1:]):
        assert b.words.start < a.words.stop  # neighbours overlap ...
        overlap_tokens = sum(1 for t in a.tokens if full.token_word[t] >= b.words.start)
        assert 0 < overlap_tokens <= 12  # ... by at most the overlap
    for segment in segments:
        assert len(segment.tokens) <= limit
        assert full.token_word[segment.tokens[0]] == -1 and full.token_word[segment.tokens[-1]] == -1
    weights = blend_weights(segments)
    total = np.zeros(full.n_words)
    for segment, weight in zip(segments, weights):
        total[segment.words.start:segment.words.stop] += weight
    np.testing.assert_allclose(total, 1.0)  # linear ramps sum to one in every overlap
    # a mask that is 1 in one segment and 0 in the next falls linearly across their overlap
    masks = [np.full(len(s.words), float(k == 0)) for k, s in enumerate(segments)]
    blended = blend(segments, masks, full.n_words)
    ramp = blended[segments[1].words.start:segments[0].words.stop]
    m = len(ramp)
    np.testing.assert_allclose(ramp, np.arange(m, 0, -1) / (m + 1))


def test_long_text_is_optimized_in_segments_not_truncated(keyword_classifier):
    encoding = keyword_classifier.encode(LONG)
    assert encoding.truncated_tokens > 0
    explanation = create("marc", max_steps=60, segment_overlap=12).explain(keyword_classifier, encoding, target=1)
    details = explanation.provenance["details"]
    full = build_encoding(keyword_classifier.tokenizer, LONG, None, 10 ** 9)
    assert details["segments"] == len(plan_segments(full, keyword_classifier.max_length, 12)) >= 3
    assert len(details["full_text_word_scores"]) == full.n_words > encoding.n_words
    assert len(explanation.word_scores) == encoding.n_words
    np.testing.assert_allclose(explanation.word_scores, details["full_text_word_scores"][:encoding.n_words],
                               atol=1e-6)
    assert any("overlapping segments" in w for w in explanation.warnings)
    keyword = full.words.index("excellent")
    assert keyword >= encoding.n_words  # the keyword lies beyond what truncation would have kept ...
    scores = np.asarray(details["full_text_word_scores"])
    assert scores[keyword] >= np.quantile(scores, 0.9)  # ... and the segments still find it


def test_one_word_input(keyword_classifier):
    explanation = create("marc", max_steps=20).explain(keyword_classifier, keyword_classifier.encode("excellent"))
    assert explanation.word_scores.shape == (1,) and 0 <= explanation.word_scores[0] <= 1
