"""Sanity-check measures against direct formulas, and the checks themselves on tiny models: full randomization
decorrelates a gradient method, a model-independent explanation stays at 1, paper 000's head check, verdicts,
the explanation cache keeps randomized and original explanations apart."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats
from tolerances import float32_tolerance

from evaluation.sanity import head_check, one_input
from explainers import REGISTRY, create
from explainers.base import Attribution, Explainer
from explainers.cache import ExplanationCache, explain_cached
from models import randomize


# ----- measures against hand / closed-form values ------------------------------------------------------------------
def test_spearman_matches_the_rank_difference_formula():
    a = np.array([0.5, 0.3, 0.9, -0.2, 0.1])
    b = np.array([0.1, 0.4, 0.8, 0.0, -0.5])
    # ranks (1 = smallest): a -> [4, 3, 5, 1, 2], b -> [3, 4, 5, 2, 1]; d = [1, -1, 0, -1, 1]
    rho = 1 - 6 * 4 / (5 * (25 - 1))
    values = one_input.compare(a, b)
    assert values["spearman"] == pytest.approx(rho)
    # absolute values: |a| ranks [4, 3, 5, 2, 1], |b| ranks [2, 3, 5, 1, 4]; d = [2, 0, 0, 1, -3]
    assert values["spearman_abs"] == pytest.approx(1 - 6 * 14 / 120)
    assert one_input.compare(a, a)["spearman"] == pytest.approx(1.0)
    assert one_input.compare(a, -a)["spearman"] == pytest.approx(-1.0)


def test_top_k_sign_change_and_mean_abs_change_by_hand():
    a = np.array([0.9, -0.8, 0.1, 0.05, 0.0])
    b = np.array([-0.2, 0.85, 0.6, 0.0, -0.01])
    # k = ceil(0.4 * 5) = 2: top |a| = {0, 1}; top |b| = {1, 2} -> overlap 1 / 2
    assert one_input.top_k_count(5, 0.4) == 2
    assert one_input.top_k_overlap(a, b, 2) == 0.5
    # signs: a = [+, -, +, +, 0], b = [-, +, +, 0, -]: changed at 0, 1, 3, 4 -> 4 / 5
    assert one_input.sign_change_share(a, b) == pytest.approx(0.8)
    assert one_input.mean_abs_change(a, b) == pytest.approx((1.1 + 1.65 + 0.5 + 0.05 + 0.01) / 5)
    unsigned = one_input.compare(np.abs(a), np.abs(b), signed=False)
    assert np.isnan(unsigned["sign_change"])  # undefined for unsigned methods
    assert one_input.top_k_count(3, 0.2) == 1 and one_input.top_k_count(1, 0.9) == 1


def test_chance_similarity_matches_its_expectations():
    rng = np.random.default_rng(0)
    scores = np.arange(10, dtype=float)
    draws = one_input.chance_similarity(scores, rng, draws=3000)
    # E[Spearman] of a random permutation = 0 (sd 1/sqrt(n-1) = 1/3 per draw); E[top-k overlap] = k / n
    assert abs(draws["spearman"].mean()) < 4 / 3 / np.sqrt(3000)
    assert draws["spearman"].std() == pytest.approx(1 / 3, rel=0.1)
    assert draws["top_k"].mean() == pytest.approx(2 / 10, abs=0.02)
    # the vectorized draws equal scipy's Spearman on the same permutations, ties included
    tied = np.array([3.0, 1.0, 1.0, 2.0, -5.0, 0.5, -2.0, 4.0])
    fast = one_input.chance_similarity(tied, np.random.default_rng(7), draws=50)
    permutations = np.argsort(np.random.default_rng(7).random((50, tied.size)), axis=1)
    for i, p in enumerate(permutations):
        assert fast["spearman"][i] == pytest.approx(stats.spearmanr(tied, tied[p]).statistic)
        assert fast["spearman_abs"][i] == pytest.approx(stats.spearmanr(np.abs(tied), np.abs(tied[p])).statistic)


def test_verdicts_by_mode_and_chance():
    frame = pd.DataFrame({"stage_index": [0, 1, 2, 3] * 2, "method": ["a"] * 4 + ["b"] * 4,
                          "spearman": [1.0, 0.9, 0.8, 0.7, 1.0, 0.2, 0.1, 0.05]})
    cascading = one_input.verdicts(frame, "cascading", "spearman", 0.5)
    assert cascading["a"]["status"] == "fails" and cascading["a"]["value"] == 0.7
    assert cascading["b"]["status"] == "passes" and cascading["b"]["value"] == 0.05
    independent = one_input.verdicts(frame, "independent", "spearman", 0.5)
    assert independent["a"]["value"] == pytest.approx(0.8) and independent["b"]["value"] == pytest.approx(0.35 / 3)
    # random rankings reach 0.9 on this input: a 0.7 cannot be told from chance
    assert one_input.verdicts(frame, "cascading", "spearman", 0.5, chance_high=0.9)["a"]["status"] == "inconclusive"


# ----- the checks on tiny models -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class _NoParams:
    pass


class WordLength(Explainer):
    """An 'edge detector' for text: the score of a word is its length. It never looks at the model."""

    id = "test_word_length"
    label = "Word length (test)"
    family = "baseline"
    Params = _NoParams

    def attribute(self, classifier, encoding, target):
        return Attribution(word_scores=np.array([len(w) for w in encoding.words], dtype=float))


SENTENCES = ["the movie was excellent and the music had some scenes with actors",
             "this story had a very long plot and it is quite old",
             "a short film with new actors and some music that was excellent"]


def test_full_randomization_decorrelates_a_gradient_method(keyword_classifier):
    values = {"input_x_gradient": [], "saliency": []}
    for text in SENTENCES:
        encoding = keyword_classifier.encode(text)
        for seed in range(4):
            result = one_input.run_sanity(keyword_classifier, encoding, list(values), seed=seed, cache=None,
                                       chance_draws=1)
            frame = result.frame()
            assert np.allclose(frame[frame["stage"] == "original"]["spearman"], 1.0)
            last = frame[frame["stage"] == "embeddings"].set_index("method")["spearman"]
            for method in values:
                values[method].append(last[method])
    for method, rhos in values.items():
        # 12 (sentence, seed) draws; each is a Spearman over ~12 words (chance sd ~0.3): the mean is near 0
        assert abs(np.mean(rhos)) < 0.25, (method, rhos)
        assert np.mean(rhos) < 0.9  # and far from the unrandomized 1


def test_model_independent_explanations_stay_at_one(keyword_classifier):
    methods = {"length": WordLength()}
    if "random" in REGISTRY:
        methods["random"] = create("random")  # the registered random baseline, seeded: the model plays no part
    encoding = keyword_classifier.encode(SENTENCES[0])
    for mode in randomize.MODES:
        for init in randomize.INITS:
            result = one_input.run_sanity(keyword_classifier, encoding, methods, mode=mode, init=init, seed=1,
                                       cache=None)
            frame = result.frame()
            assert len(frame) == len(methods) * 5  # original + head + 2 blocks + embeddings
            assert np.allclose(frame["spearman"], 1.0) and (frame["top_k"] == 1.0).all()
            assert (frame["mean_abs_change"] == 0.0).all()
            verdicts = result.verdicts()
            assert all(v["status"] in ("fails", "inconclusive") for v in verdicts.values()), verdicts
    # on 12 words random rankings stay below 1, so the verdict is a plain "fails"
    assert one_input.run_sanity(keyword_classifier, encoding, methods, cache=None).verdicts()["length"]["status"] \
        == "fails"


def test_result_tables_grid_and_provenance(keyword_classifier):
    encoding = keyword_classifier.encode(SENTENCES[1])
    result = one_input.run_sanity(keyword_classifier, encoding, ["leave_one_out", "attention"], mode="independent",
                               seed=4, cache=None)
    assert result.stage_names == ["original", "head", "block 1", "block 0", "embeddings"] and result.complete
    names, words, matrix = result.grid("leave_one_out")
    assert words == list(encoding.words) and matrix.shape == (5, encoding.n_words)
    # each grid row is that stage's explanation; row 0 equals a plain explanation of the original model
    plain = create("leave_one_out").explain(keyword_classifier, encoding, result.target)
    assert np.allclose(matrix[0], plain.word_scores, rtol=0, atol=float32_tolerance(1.0))
    head_stage = result.stage("head")
    # the head does not change the encoder: attention weights are identical, so attention's rho is exactly 1
    frame = result.frame().set_index(["stage", "method"])
    assert frame.loc[("head", "attention"), "spearman"] == pytest.approx(1.0)
    assert np.allclose(head_stage.explanations["attention"].word_scores,
                       result.stages[0].explanations["attention"].word_scores)
    # randomized stage explanations are computed on the randomized model, with the original target
    model = randomize.randomized(keyword_classifier, "block 0", mode="independent", seed=4)
    again = create("leave_one_out").explain(model, encoding, result.target)
    assert np.allclose(result.stage("block 0").explanations["leave_one_out"].word_scores, again.word_scores, rtol=0,
                       atol=float32_tolerance(1.0))
    assert frame.loc[("block 0", "leave_one_out"), "fingerprint"] == model.fingerprint
    provenance = result.provenance()
    assert provenance["seed"] == 4 and provenance["mode"] == "independent"
    assert provenance["fingerprints"]["block 0"] == model.fingerprint


def test_stopping_keeps_finished_stages(keyword_classifier):
    encoding = keyword_classifier.encode(SENTENCES[2])
    finished = [0]

    def progress(done: int, total: int, label: str) -> None:
        finished[0] = done

    def stop() -> bool:  # polled between explanations and, inside one, at each batch
        return finished[0] >= 4  # after 4 explanations: original + head with 2 methods each

    result = one_input.run_sanity(keyword_classifier, encoding, ["saliency", "attention"], cache=None,
                               progress=progress, should_stop=stop)
    assert not result.complete
    assert [s.name for s in result.stages if len(s.explanations) == 2] == ["original", "head"]


def test_paper_000_head_check(keyword_classifier):
    encoding = keyword_classifier.encode(SENTENCES[0])
    result = head_check.run_head_check(keyword_classifier, encoding, ["leave_one_out", "attention"], cache=None)
    assert result.seeds == [0, 1, 2] and result.layer == "classifier"
    frame = result.frame()
    for seed in result.seeds:
        model = randomize.randomize_head(keyword_classifier, seed)
        explanation = create("leave_one_out").explain(model, encoding, result.target)
        original = result.original["leave_one_out"].word_scores
        row = frame[(frame["seed"] == seed) & (frame["method"] == "leave_one_out")].iloc[0]
        assert row["sign_change"] == pytest.approx(np.mean(np.sign(original) != np.sign(explanation.word_scores)))
        assert row["mean_abs_change"] == pytest.approx(np.mean(np.abs(original - explanation.word_scores)))
    attention = frame[frame["method"] == "attention"]
    assert (attention["mean_abs_change"] == 0).all()  # the head is not part of the attention weights
    assert attention["sign_change"].isna().all()  # attention is unsigned
    summary = result.summary().set_index("method")
    loo = frame[frame["method"] == "leave_one_out"]
    assert summary.loc["leave_one_out", "sign_change_mean"] == pytest.approx(loo["sign_change"].mean())
    assert summary.loc["leave_one_out", "mean_abs_change_std"] == pytest.approx(loo["mean_abs_change"].std())


def test_the_cache_keeps_randomized_and_original_explanations_apart(keyword_classifier):
    cache = ExplanationCache(directory=None)
    encoding = keyword_classifier.encode(SENTENCES[0])
    before = {k: v.clone() for k, v in keyword_classifier.model.state_dict().items()}
    result = one_input.run_sanity(keyword_classifier, encoding, ["saliency"], cache=cache)
    fingerprints = {s.fingerprint for s in result.stages}
    assert len(fingerprints) == 5 and len(cache._items) == 5
    explainer = create("saliency")
    missing, _, _ = one_input.missing_work(keyword_classifier, encoding, {"saliency": explainer}, "cascading", "model", 0,
                                     result.target, cache)
    assert missing == 0  # every stage is found under its predicted fingerprint without building the models
    cached = explain_cached(explainer, keyword_classifier, encoding, result.target, cache=cache)
    fresh = explainer.explain(keyword_classifier, encoding, result.target)
    assert np.array_equal(cached.word_scores, fresh.word_scores)
    assert all(torch.equal(v, keyword_classifier.model.state_dict()[k]) for k, v in before.items())
    other, _, _ = one_input.missing_work(keyword_classifier, encoding, {"saliency": explainer}, "cascading", "model", 1,
                                   result.target, cache)
    assert other == 4  # another seed: the four randomized stages are new work
