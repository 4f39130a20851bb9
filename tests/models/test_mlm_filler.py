"""Masked-LM counterfactuals: the filler API, the MLM-fill operator, Input Marginalization, LIME-BERT,
the candidate inspector and the offline masked-LM recipe.

Unit tests use a tiny BertForMaskedLM built here (random weights, the tiny word vocabulary of tiny_models) and
fake masked LMs defined here; the head-randomization check (paper 000 Table A5 direction) uses the real
default-quick classifier and the prepared offline masked LM (built if missing, like ``quick_classifier``).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import torch
from tiny_models import VOCAB, tiny_masked_lm
from tolerances import float32_tolerance, log2_odds_tolerance

from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from explainers import create
from explainers.methods.input_marginalization import InputMarginalization, marginal_log2_odds
from explainers.methods.leave_one_out_fill import LeaveOneOutFill
from explainers.methods.lime_bert import LimeBert
from models import ModelNotPrepared, perturb
from models.mlm import (
    RECIPE,
    Candidate,
    FixedFill,
    MaskedLMFiller,
    MaskedLMNotPrepared,
    clear_loaded,
    evaluate_filler,
    find_prepared_mlm,
    inspect_candidates,
    load_filler,
    prepare_mlm,
    read_mlm_manifest,
    with_fill_options,
)
from models.mlm.prepare import build_model


# ----- a tiny masked LM (random weights) and fakes --------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_mlm() -> MaskedLMFiller:
    return tiny_masked_lm(sharpen=8.0)


def direct_distribution(filler: MaskedLMFiller, text: str, pair: str | None = None, which: int = 0) -> np.ndarray:
    """Softmax over the vocabulary at the ``which``-th [MASK] of ``text`` (and ``pair``), straight from the model."""
    enc = filler.tokenizer(text, pair, return_tensors="pt")
    with torch.no_grad():
        logits = filler.model(**enc).logits[0]
    position = (enc["input_ids"][0] == filler.tokenizer.mask_token_id).nonzero()[which, 0]
    return torch.softmax(logits[position].double(), -1).numpy()


def valid_ids(tokenizer) -> np.ndarray:
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(VOCAB))))
    return np.array([not t.startswith("##") and i not in tokenizer.all_special_ids for i, t in enumerate(tokens)])


class IdentityMLM:
    """A fake masked LM that always proposes the original word with probability 1."""

    name = "identity"

    def top_k(self, inputs, positions, k=10, min_probability=0.0):
        return [[Candidate(inp.words[p], 1.0, -1)] for inp, p in zip(inputs, positions)]

    def fill(self, encoding, keep):
        return [list(encoding.words) for _ in np.atleast_2d(keep)]

    def identity(self):
        return {"mlm": self.name}


class ListMLM:
    """A fake masked LM proposing the same fixed candidates for every word."""

    name = "list"

    def __init__(self, candidates: list[tuple[str, float]]):
        self.candidates = candidates

    def top_k(self, inputs, positions, k=10, min_probability=0.0):
        chosen = [Candidate(w, p, -1) for w, p in self.candidates if p >= min_probability][:k]
        return [list(chosen) for _ in inputs]

    def fill(self, encoding, keep):
        return [[w if k else self.candidates[0][0] for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


class MaskWordFill:
    """A fake filler writing the literal word [MASK] for every removed word."""

    name = "mask-word"

    def fill(self, encoding, keep):
        return [[w if k else "[MASK]" for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


# ----- the filler API -------------------------------------------------------------------------------------------
def test_top_k_equals_the_direct_softmax(tiny_mlm):
    text = "the movie was excellent and fun"
    [candidates] = tiny_mlm.top_k([text], [3], k=5)
    expected = direct_distribution(tiny_mlm, "the movie was [MASK] and fun")
    expected = np.where(valid_ids(tiny_mlm.tokenizer), expected, -1)
    order = np.argsort(-expected)[:5]
    assert [c.token_id for c in candidates] == order.tolist()
    assert [c.word for c in candidates] == [VOCAB[i] for i in order]
    np.testing.assert_allclose([c.probability for c in candidates], expected[order], rtol=0,
                               atol=float32_tolerance(1.0))  # float32 probabilities
    assert all(not c.word.startswith("##") and c.word not in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "[UNK]")
               for c in candidates)


def test_top_k_sees_both_segments_and_batches_like_single_calls(tiny_mlm):
    pair = ("a long film", "the story was good")
    [with_pair] = tiny_mlm.top_k([pair], [4], k=4)  # word 4 = "story" in the hypothesis
    expected = direct_distribution(tiny_mlm, "a long film", "the [MASK] was good")
    np.testing.assert_allclose([c.probability for c in with_pair], np.sort(
        np.where(valid_ids(tiny_mlm.tokenizer), expected, -1))[::-1][:4], rtol=0, atol=float32_tolerance(1.0))
    alone = tiny_mlm.top_k(["the story was good"], [1], k=4)[0]
    assert [c.probability for c in alone] != pytest.approx([c.probability for c in with_pair])  # premise matters
    inputs = ["the movie was excellent and fun", pair, "it is very quite rather long short old new", "dull"]
    positions = [2, 1, 7, 0]
    batched = tiny_mlm.top_k(inputs, positions, k=3)
    for item, position, result in zip(inputs, positions, batched):
        single = tiny_mlm.top_k([item], [position], k=3)[0]
        assert [c.word for c in result] == [c.word for c in single]
        np.testing.assert_allclose([c.probability for c in result], [c.probability for c in single], rtol=0,
                                   atol=float32_tolerance(1.0))  # batched vs alone


def test_threshold_keeps_every_word_at_least_that_likely(tiny_mlm):
    distribution = np.where(valid_ids(tiny_mlm.tokenizer),
                            direct_distribution(tiny_mlm, "the [MASK] was good"), -1)
    threshold = float(np.sort(distribution)[-7])  # exactly 7 words reach it
    [candidates] = tiny_mlm.top_k(["the story was good"], [1], k=100, min_probability=threshold)
    assert len(candidates) == 7 and min(c.probability for c in candidates) >= threshold
    [capped] = tiny_mlm.top_k(["the story was good"], [1], k=3, min_probability=threshold)
    assert [c.word for c in capped] == [c.word for c in candidates[:3]]


def test_odd_inputs_a_typed_mask_token_and_words_beyond_the_length_limit(tiny_mlm):
    [typed] = tiny_mlm.top_k(["the [MASK] movie was good"], [3], k=3)  # the user typed [MASK] as a word
    expected = np.where(valid_ids(tiny_mlm.tokenizer), direct_distribution(tiny_mlm, "the [UNK] movie [MASK] good"), -1)
    assert [c.token_id for c in typed] == np.argsort(-expected)[:3].tolist()
    long_text = " ".join(["the movie was good"] * 25)  # 100 words, more than the tiny model's 64 positions
    near, far = tiny_mlm.top_k([long_text, long_text], [2, 90], k=3)
    assert len(near) == 3 and far == []  # a word cut off by truncation gets no candidates (and no crash)
    with pytest.raises(ValueError, match="outside"):
        tiny_mlm.top_k(["too short"], [5], k=3)


def test_exclude_original_drops_the_word_itself(tiny_mlm):
    [plain] = tiny_mlm.top_k(["the movie was good"], [1], k=3)
    original = plain[0].word
    text = f"the {original} was good"
    excluding = tiny_mlm.with_options(exclude_original=True)
    [without] = excluding.top_k([text], [1], k=3)
    assert original not in [c.word for c in without]
    assert [c.word for c in without] == [c.word for c in tiny_mlm.top_k([text], [1], k=4)[0] if c.word != original][:3]
    assert tiny_mlm.exclude_original is False  # with_options made a twin, the original is unchanged


def test_joint_fill_takes_the_top1_of_every_mask(tiny_mlm, keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    keep = np.array([[True, False, True, False, True, True], [True] * 6])
    rows = tiny_mlm.fill(encoding, keep)
    assert rows[1] == list(encoding.words)  # nothing removed: nothing filled
    valid = valid_ids(tiny_mlm.tokenizer)
    for which, index in enumerate((1, 3)):
        distribution = np.where(valid, direct_distribution(tiny_mlm, "the [MASK] was [MASK] and fun", which=which), -1)
        assert rows[0][index] == VOCAB[int(np.argmax(distribution))]
    assert [w for i, w in enumerate(rows[0]) if i not in (1, 3)] == ["the", "was", "and", "fun"]
    # the vocabulary projection runs on a few masks at a time: any sub-batch size gives the same distributions
    plain = [(list(encoding.words), list(encoding.word_segment))] * 3
    masked = [{1, 3}, {0}, {2, 4, 5}]
    whole = tiny_mlm._run(plain, masked, lambda p, owners: list(p.numpy()))
    one_by_one = tiny_mlm._run(plain, masked, lambda p, owners: list(p.numpy()), head_batch=1)
    for a, b in zip(whole, one_by_one):
        np.testing.assert_allclose(np.array(a), np.array(b), rtol=0, atol=float32_tolerance(1.0))


def test_sequential_fill_conditions_on_earlier_fills(tiny_mlm, keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    keep = np.array([[True, False, True, False, False, True]])
    [row] = tiny_mlm.with_options(mode="sequential").fill(encoding, keep)
    valid = valid_ids(tiny_mlm.tokenizer)
    words = list(encoding.words)
    for index in (1, 3, 4):  # by hand: mask every pending word, fill the leftmost, repeat
        masked = [("[MASK]" if (i == index or (i > index and i in (1, 3, 4))) else w) for i, w in enumerate(words)]
        distribution = np.where(valid, direct_distribution(tiny_mlm, " ".join(masked)), -1)
        words[index] = VOCAB[int(np.argmax(distribution))]
    assert row == words


def test_mlm_operator_tokenizes_the_filled_words(tiny_mlm, keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    keep = np.array([[True, True, True, False, True, True], [False, True, True, True, True, False]])
    batch = perturb(keyword_classifier, encoding, keep, "mlm", filler=tiny_mlm)
    filled = tiny_mlm.fill(encoding, keep)
    expected = keyword_classifier.tokenize_texts([" ".join(r) for r in filled])
    assert batch.input_ids == expected.input_ids


def test_candidate_inspector_reports_the_original_words_probability(tiny_mlm, keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent")
    table = inspect_candidates(tiny_mlm, encoding, k=3)
    assert [row.word for row in table] == ["the", "movie", "was", "excellent"]
    for row in table:
        masked = " ".join("[MASK]" if i == row.index else w for i, w in enumerate(encoding.words))
        distribution = direct_distribution(tiny_mlm, masked)
        assert row.original_probability == pytest.approx(distribution[VOCAB.index(row.word)],
                                                         abs=float32_tolerance(1.0))
        valid = np.where(valid_ids(tiny_mlm.tokenizer), distribution, -1)
        assert row.original_rank == 1 + int((valid > distribution[VOCAB.index(row.word)]).sum())
        assert [c.word for c in row.candidates] == [VOCAB[i] for i in np.argsort(-valid)[:3]]
        assert row.predictable(0.0) == (row.original_rank == 1)


def test_missing_offline_mlm_says_how_to_build_it(isolated_cache):
    with pytest.raises(ModelNotPrepared, match="prepare-mlm"):
        load_filler("mlm")
    with pytest.raises(MaskedLMNotPrepared):
        create("input_marginalization").cache_identity()  # the cache key needs the masked LM's fingerprint


# ----- Input Marginalization ------------------------------------------------------------------------------------
@pytest.mark.parametrize("preset", ["paper-000-top10", "kim-2020-sigma"])
@pytest.mark.parametrize("score", ["log2-odds", "probability"])
def test_im_is_zero_when_the_mlm_always_returns_the_original_word(keyword_classifier, preset, score):
    encoding = keyword_classifier.encode("the movie was excellent , not dull")
    explanation = InputMarginalization(preset=preset, score=score, filler=IdentityMLM()).explain(
        keyword_classifier, encoding)
    assert explanation.word_scores.shape == (encoding.n_words,)
    np.testing.assert_array_equal(explanation.word_scores, np.zeros(encoding.n_words))
    assert explanation.provenance["removal_operator"] == "mlm"


def test_im_equals_the_formula_computed_by_hand(keyword_classifier):
    candidates = [("good", 0.5), ("dull", 0.2), ("film", 0.1)]
    encoding = keyword_classifier.encode("the movie was excellent")
    explanation = InputMarginalization(filler=ListMLM(candidates), k=10).explain(keyword_classifier, encoding, 1)

    def log2_odds(p):
        return math.log2(p / (1 - p))

    words = list(encoding.words)
    f_x = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts([" ".join(words)]))[0, 1]
    for i in range(len(words)):
        texts = [" ".join(words[:i] + [c] + words[i + 1:]) for c, _ in candidates]
        f = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts(texts))[:, 1]
        weights = np.array([p for _, p in candidates])
        expected = log2_odds(f_x) - log2_odds(float((weights * f).sum() / weights.sum()))  # Eqs. 3-4, renormalized
        assert explanation.word_scores[i] == pytest.approx(expected, abs=log2_odds_tolerance([f_x, *f]))
    assert explanation.word_scores[3] > 1.0  # removing the keyword lowers "positive" a lot
    # the sigma variant keeps only candidates >= threshold: here the first two
    sigma = InputMarginalization(filler=ListMLM(candidates), candidates="threshold", threshold=0.15).explain(
        keyword_classifier, encoding, 1)
    texts = ["the movie was good", "the movie was dull"]
    f = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts(texts))
    expected = log2_odds(f_x) - log2_odds(float((0.5 * f[0, 1] + 0.2 * f[1, 1]) / 0.7))
    assert sigma.word_scores[3] == pytest.approx(expected, abs=log2_odds_tolerance([f_x, *f[:, 1]]))


def test_im_with_a_real_masked_lm_batches_every_candidate(tiny_mlm, keyword_classifier):
    from models import metered

    encoding = keyword_classifier.encode("the movie was excellent and fun")
    explainer = InputMarginalization(filler=tiny_mlm, k=4)
    with metered() as meter:
        explanation = explainer.explain(keyword_classifier, encoding, 1)
    n = encoding.n_words
    assert explanation.provenance["forward_passes"] == 1 + n * 4  # the original and every candidate (target given)
    assert meter.batches <= 3  # all counterfactuals in one engine call (a few length buckets at most)
    words = explanation.provenance["details"]["words"]
    ranked = tiny_mlm.top_k([encoding] * n, list(range(n)), k=4)
    for i, (row, candidates) in enumerate(zip(words, ranked)):
        assert row["candidates"] == [[c.word, round(c.probability, 6)] for c in candidates]
        texts = [" ".join(list(encoding.words[:i]) + [c.word] + list(encoding.words[i + 1:])) for c in candidates]
        f = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts(texts))[:, 1]
        weights = np.array([c.probability for c in candidates])
        assert row["expected_probability"] == pytest.approx(float((weights * f).sum() / weights.sum()),
                                                            abs=float32_tolerance(1.0))
    assert explainer.cache_identity()["masked_lm"]["fingerprint"] == tiny_mlm.fingerprint


def test_im_without_the_original_word_marginalizes_over_the_other_candidates(tiny_mlm, keyword_classifier):
    """Paper 000 section 7's "obvious fix": the word itself is no candidate; by hand from the other words."""
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    explanation = InputMarginalization(filler=tiny_mlm, preset="paper-000-other-words", k=3).explain(
        keyword_classifier, encoding, 1)
    assert InputMarginalization(preset="paper-000-other-words").params.exclude_original
    words = list(encoding.words)
    f_x = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts([" ".join(words)]))[0, 1]
    ranked = tiny_mlm.with_options(exclude_original=True).top_k([encoding] * len(words), list(range(len(words))), k=3)
    for i, candidates in enumerate(ranked):
        assert all(not c.matches(words[i]) for c in candidates) and len(candidates) == 3
        texts = [" ".join(words[:i] + [c.word] + words[i + 1:]) for c in candidates]
        f = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts(texts))[:, 1]
        weights = np.array([c.probability for c in candidates])
        e = float((weights * f).sum() / weights.sum())
        expected = math.log2(f_x / (1 - f_x)) - math.log2(e / (1 - e))
        assert explanation.word_scores[i] == pytest.approx(expected, abs=log2_odds_tolerance([f_x, *f]))
    shown = explanation.provenance["details"]["words"]
    assert not any(row["top1_is_original"] for row in shown)


def test_marginal_log2_odds_is_stable_near_certainty():
    logits = np.array([[0.0, 2.0], [0.5, -1.0]])
    weights = np.array([0.3, 0.1])
    p = np.exp(logits[:, 1]) / np.exp(logits).sum(axis=1)
    e = (weights * p).sum() / weights.sum()
    assert marginal_log2_odds(logits, weights, 1) == pytest.approx(math.log2(e / (1 - e)), rel=1e-12)
    extreme = np.array([[0.0, 60.0], [0.0, 70.0]])  # p rounds to 1.0 in float64
    value = marginal_log2_odds(extreme, np.array([0.5, 0.5]), 1)
    assert math.isfinite(value) and value == pytest.approx((60 + math.log(2) - math.log1p(math.exp(-10))) / math.log(2),
                                                           rel=1e-5)


def test_leave_one_out_fill_is_im_with_one_candidate(tiny_mlm, keyword_classifier):
    from explainers.methods.leave_one_out_fill import LeaveOneOutFill

    encoding = keyword_classifier.encode("the movie was excellent and fun")
    loo = LeaveOneOutFill(filler=tiny_mlm).explain(keyword_classifier, encoding, 1)
    im = InputMarginalization(filler=tiny_mlm, k=1).explain(keyword_classifier, encoding, 1)
    # log2-odds from two float32 logits each (tests/tolerances.py), the rows batched another way
    logits = keyword_classifier.predict_logits([encoding])
    np.testing.assert_allclose(loo.word_scores, im.word_scores, rtol=0, atol=4 * float32_tolerance(logits) / math.log(2))
    other = LeaveOneOutFill(filler=tiny_mlm, exclude_original=True).explain(keyword_classifier, encoding, 1)
    words = list(encoding.words)
    for i in range(len(words)):  # by hand: the best word other than the original, in place of word i
        [best] = tiny_mlm.with_options(exclude_original=True).top_k([encoding], [i], k=1)
        texts = [" ".join(words), " ".join(words[:i] + [best[0].word] + words[i + 1:])]
        p = keyword_classifier.predict_proba(keyword_classifier.tokenize_texts(texts))[:, 1]
        expected = math.log2(p[0] / (1 - p[0])) - math.log2(p[1] / (1 - p[1]))
        assert other.word_scores[i] == pytest.approx(expected, abs=log2_odds_tolerance(p))


# ----- LIME-BERT ------------------------------------------------------------------------------------------------
def test_lime_bert_with_a_mask_word_filler_equals_lime_with_the_mask_operator(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    settings = {"n_samples": 120, "seed": 4, "score": "probability"}
    bert = LimeBert(filler=MaskWordFill(), **settings).explain(keyword_classifier, encoding, 1)
    lime = create("lime", preset="paper-000", operator="mask", **settings).explain(keyword_classifier, encoding, 1)
    # the same rows, possibly batched another way: a ridge fit of float32 probabilities
    np.testing.assert_allclose(bert.word_scores, lime.word_scores, rtol=0, atol=float32_tolerance(1.0))
    assert bert.provenance["removal_operator"] == "mlm"
    assert int(np.argmax(bert.word_scores)) == 3  # the keyword


def test_lime_bert_with_an_identity_filler_sees_no_change(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    explanation = LimeBert(filler=IdentityMLM(), n_samples=60).explain(keyword_classifier, encoding, 1)
    np.testing.assert_allclose(explanation.word_scores, 0.0, atol=float32_tolerance(1.0))  # rows batched together


def test_lime_bert_fills_with_the_masked_lm(tiny_mlm, keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    sequential = tiny_mlm.with_options(mode="sequential")
    explainer = LimeBert(filler=sequential, n_samples=40, seed=1, fill_mode="sequential")
    before = sequential.forward_passes
    explanation = explainer.explain(keyword_classifier, encoding, 1)
    assert explanation.provenance["details"]["fill_mode"] == "sequential"
    # one masked-LM pass per removed word of every distinct sample, as the filler itself counted them
    assert explanation.provenance["details"]["mlm_forward_passes"] == sequential.forward_passes - before > 0
    assert explainer.cache_identity()["masked_lm"]["mode"] == "sequential"
    assert explainer.cache_identity() != LimeBert(filler=tiny_mlm, n_samples=40, seed=1).cache_identity()
    again = LimeBert(filler=tiny_mlm, n_samples=40, seed=1, fill_mode="sequential").explain(keyword_classifier,
                                                                                            encoding, 1)
    np.testing.assert_array_equal(explanation.word_scores, again.word_scores)  # seeded


def test_every_masked_lm_method_gets_its_own_fill_options_on_the_shared_model(tiny_mlm):
    """One rule (``with_fill_options``) for the three methods: each option it owns applied, the others left as the
    given filler has them, the model shared; a filler without options (a fill in code) is used as it is."""
    assert with_fill_options(tiny_mlm) is tiny_mlm and with_fill_options(tiny_mlm, mode="joint") is tiny_mlm
    sequential = tiny_mlm.with_options(mode="sequential")
    lime = LimeBert(filler=sequential, fill_mode="joint").filler()
    assert (lime.mode, lime.exclude_original, lime.model) == ("joint", False, tiny_mlm.model)
    for method in (InputMarginalization, LeaveOneOutFill):
        other_words = method(filler=sequential, exclude_original=True).filler()
        assert (other_words.mode, other_words.exclude_original, other_words.model) == ("sequential", True,
                                                                                       tiny_mlm.model)
        assert method(filler=sequential).filler() is sequential  # nothing to change: the given filler itself
    fixed = FixedFill([["a"]])
    assert LimeBert(filler=fixed, fill_mode="sequential").filler() is fixed


def test_fixed_fill_checks_its_rows(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was good")
    with pytest.raises(ValueError):
        FixedFill([["too", "short"]]).fill(encoding, np.ones((1, 4), dtype=bool))


# ----- the offline masked-LM recipe -----------------------------------------------------------------------------
@pytest.mark.slow
def test_prepare_mlm_builds_evaluates_and_loads(isolated_cache):
    recipe = dataclasses.replace(RECIPE, steps=2, batch_size=4, train_limit=40, eval_limit=3, trainable_layers=1,
                                 eval_data=("sst2:dev",))
    assert find_prepared_mlm(recipe) is None
    folder = prepare_mlm(recipe, log=lambda message: None)
    manifest = read_mlm_manifest(folder)
    assert manifest["stand_in"] is True and manifest["training"]["steps"] == 2
    assert manifest["train_sentences"] == 40 - manifest["removed_eval_overlap"]
    result = manifest["evaluation"]["sst2:dev"]
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    filler = MaskedLMFiller(AutoModelForMaskedLM.from_pretrained(folder), AutoTokenizer.from_pretrained(folder),
                            name="check", device="cpu")
    from corpora import load_dataset

    examples = load_dataset("sst2:dev", limit=3)
    hits1 = hits10 = total = 0
    for example in examples:  # the accuracy by hand: one word masked at a time
        words = example.text.split()
        for i, word in enumerate(words):
            [ranked] = filler.top_k([example.text], [i], k=10)
            hits1 += ranked[0].word == word.lower()
            hits10 += word.lower() in [c.word for c in ranked]
            total += 1
    assert result["words"] == total
    assert result["top1_accuracy"] == pytest.approx(hits1 / total, abs=1e-4)
    assert result["top10_accuracy"] == pytest.approx(hits10 / total, abs=1e-4)
    assert evaluate_filler(filler, [(e.text, None) for e in examples]) == result
    assert find_prepared_mlm(recipe) == folder and find_prepared_mlm(RECIPE) is None
    clear_loaded()


def test_the_masked_lm_head_starts_from_the_recipe_seed():
    """The new head's initial weights come from the recipe's seed, so one recipe builds one model (they used to
    depend on whatever the process had drawn before)."""
    torch.manual_seed(123)
    first, _ = build_model(trainable_layers=0, seed=0)
    torch.rand(7)  # other random draws in between change nothing
    again, _ = build_model(trainable_layers=0, seed=0)
    other, _ = build_model(trainable_layers=0, seed=1)
    head = "cls.predictions.transform.dense.weight"
    torch.testing.assert_close(first.state_dict()[head], again.state_dict()[head], rtol=0, atol=0)
    assert not torch.equal(first.state_dict()[head], other.state_dict()[head])


def test_fills_are_computed_once_per_removed_set(tiny_mlm, keyword_classifier):
    """the fill of an input's removed set is remembered, so ROAD's MoRF and LeRF, DeletionBERT and every
    ordering share the masked-LM passes; the remembered rows equal the masked LM's own fill."""
    filler = MaskedLMFiller(tiny_mlm.model, tiny_mlm.tokenizer, name="fresh", device="cpu")  # an empty memo
    encoding = keyword_classifier.encode("the movie was excellent and fun")
    first = np.array([[True, False, True, False, True, True], [False, True, True, True, True, True]])
    rows = filler.fill(encoding, first)
    assert filler.forward_passes == 2
    again = np.array([first[1], [True, True, True, True, False, False], first[0], first[0]])
    assert filler.fill(encoding, again) == [rows[1], *filler._fill_rows(encoding, again[1:2]), rows[0], rows[0]]
    assert filler.forward_passes == 2 + 1 + 1  # the new set once in fill, once by hand above; the others free
    sequential = filler.with_options(mode="sequential")  # another fill mode is another memo entry
    assert sequential.fill(encoding, first[:1]) == sequential._fill_rows(encoding, first[:1])


def test_road_then_deletion_bert_reuse_the_fills(tiny_mlm, keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent and fun too")
    scores = np.array([0.1, 0.3, 0.2, 5.0, -1.0, 0.0, 0.4])
    shared = MaskedLMFiller(tiny_mlm.model, tiny_mlm.tokenizer, name="shared", device="cpu")
    alone = MaskedLMFiller(tiny_mlm.model, tiny_mlm.tokenizer, name="alone", device="cpu")
    evaluate_scores(keyword_classifier, encoding, [BY_ID["road-morf"], BY_ID["road-lerf"]], scores, RemovalOptions(),
                    filler_options={"filler": shared})
    before = shared.forward_passes
    reused = evaluate_scores(keyword_classifier, encoding, [BY_ID["deletion-bert-auc"]], scores, RemovalOptions(),
                             filler_options={"filler": shared})
    fresh = evaluate_scores(keyword_classifier, encoding, [BY_ID["deletion-bert-auc"]], scores, RemovalOptions(),
                            filler_options={"filler": alone})
    assert shared.forward_passes == before  # DeletionBERT's removed sets are among ROAD MoRF's
    assert alone.forward_passes > 0
    assert reused.values["deletion-bert-auc"] == fresh.values["deletion-bert-auc"]
