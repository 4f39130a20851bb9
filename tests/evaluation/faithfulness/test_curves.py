"""Each removal metric against a value computed by hand on the tiny keyword model.

The keyword model is positive iff "excellent" appears. Expected values are computed independently of the
perturbation engine: the perturbed sentence is written out as text ("[MASK]" / "[PAD]" strings, or the word
left out), encoded from scratch and classified, then the paper's formula is applied with plain Python.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import auc
from tolerances import float32_tolerance

from evaluation.faithfulness import curves as F
from evaluation.faithfulness.curve_points import steps_limit
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores, rank_words
from evaluation.faithfulness.presets import BY_ID, EVALUATOR_METRICS, METRICS, removal_metrics_of
from evaluation.metric import EVALUATORS
from evaluation.metric import METRICS as REGISTERED
from explainers.params import options_from

PROBABILITY = float32_tolerance(1.0)  # metrics of float32 probabilities, batched differently from prob()

WORDS = "the movie was excellent and long".split()
TEXT = " ".join(WORDS)
# ranking: excellent (3), movie (1), was (2), the (0), long (5), and (4)
SCORES = np.array([0.1, 0.3, 0.2, 5.0, -1.0, 0.0])
ORDER = [3, 1, 2, 0, 5, 4]


def prob(classifier, words, target):
    """p(target | text) for a word list, encoded from scratch (the hand path)."""
    return float(classifier.predict_proba([classifier.encode(" ".join(words) if words else "")])[0][target]) \
        if words else float(classifier.predict_proba(classifier.tokenize_texts([""]))[0][target])


def removed(words, drop, replacement=None):
    """The words with indices ``drop`` left out (delete) or replaced by ``replacement``."""
    if replacement is None:
        return [w for i, w in enumerate(words) if i not in drop]
    return [replacement if i in drop else w for i, w in enumerate(words)]


def kept_only(words, keep, replacement=None):
    return removed(words, set(range(len(words))) - set(keep), replacement)


@pytest.fixture(scope="module")
def clf(keyword_classifier):
    return keyword_classifier


@pytest.fixture(scope="module")
def enc(clf):
    return clf.encode(TEXT)


def values_of(clf, enc, metric_ids, scores=SCORES, **options):
    metrics = [BY_ID[m] for m in metric_ids]
    return evaluate_scores(clf, enc, metrics, scores, RemovalOptions(**options))


def test_the_model_depends_on_one_word(clf):
    assert prob(clf, WORDS, 1) > 0.9
    assert prob(clf, removed(WORDS, {3}), 1) < 0.1


def test_ranking_is_signed_with_seeded_ties():
    assert list(rank_words(SCORES)) == ORDER
    assert list(rank_words(SCORES, rank_by="absolute"))[:2] == [3, 4]  # |-1.0| is second by magnitude
    tied = np.zeros(8)
    assert list(rank_words(tied, seed=3)) == list(rank_words(tied, seed=3))
    orders = {tuple(rank_words(tied, seed=s)) for s in range(6)}
    assert len(orders) > 1  # the seed changes how ties are broken
    assert rank_words(np.array([0.0, 2.0, 0.0, 2.0]), seed=1)[:2].tolist() in ([1, 3], [3, 1])


def test_eraser_comprehensiveness_and_sufficiency_by_hand(clf, enc):
    p = prob(clf, WORDS, 1)
    # floor(k * 6) for k in 1, 5, 10, 20, 50 %: 0, 0, 0, 1, 3 words; AOPC divides by |B| + 1 = 6
    comp = (p - prob(clf, removed(WORDS, {3}), 1)) + (p - prob(clf, removed(WORDS, {3, 1, 2}), 1))
    suff = (p - prob(clf, kept_only(WORDS, {3}), 1)) + (p - prob(clf, kept_only(WORDS, {3, 1, 2}), 1))
    result = values_of(clf, enc, ["comprehensiveness-eraser", "sufficiency-eraser"])
    assert result.values["comprehensiveness-eraser"] == pytest.approx(comp / 6, abs=PROBABILITY)
    assert result.values["sufficiency-eraser"] == pytest.approx(suff / 6, abs=PROBABILITY)
    assert result.curves["comprehensiveness-eraser"].counts == [0, 0, 0, 1, 3]
    # the paper's own text divides by |B| instead
    text = values_of(clf, enc, ["comprehensiveness-eraser"], aopc_divisor="bins")
    assert text.values["comprehensiveness-eraser"] == pytest.approx(comp / 5, abs=PROBABILITY)


def test_paper_004_point_metrics_and_log_odds_by_hand(clf, enc):
    p = prob(clf, WORDS, 1)
    # floor(0.2 * 6) = 1 word: Comp / Suff delete, LO replaces with [MASK] and uses natural logs
    expected_lo = math.log(prob(clf, removed(WORDS, {3}, "[MASK]"), 1)) - math.log(p)
    result = values_of(clf, enc, ["comprehensiveness-004", "sufficiency-004", "log-odds-004"])
    assert result.values["comprehensiveness-004"] == pytest.approx(p - prob(clf, removed(WORDS, {3}), 1), abs=PROBABILITY)
    assert result.values["sufficiency-004"] == pytest.approx(p - prob(clf, ["excellent"], 1), abs=PROBABILITY)
    assert result.values["log-odds-004"] == pytest.approx(expected_lo, abs=float32_tolerance(max(1.0, abs(expected_lo))))
    assert result.values["log-odds-004"] < -1.0  # the keyword carried the prediction


def test_paper_002_nineteen_points_with_pad_by_hand(clf, enc):
    p = prob(clf, WORDS, 1)
    comp, suff = [], []
    for i in range(1, 20):
        c = math.ceil(round(0.05 * i * 6, 9))
        comp.append(p - prob(clf, removed(WORDS, set(ORDER[:c]), "[PAD]"), 1))
        suff.append(p - prob(clf, kept_only(WORDS, set(ORDER[:c]), "[PAD]"), 1))
    result = values_of(clf, enc, ["comprehensiveness-002", "sufficiency-002"])
    assert result.values["comprehensiveness-002"] == pytest.approx(np.mean(comp), abs=PROBABILITY)
    assert result.values["sufficiency-002"] == pytest.approx(np.mean(suff), abs=PROBABILITY)
    assert len(result.curves["comprehensiveness-002"].x) == 19


def test_paper_003_ceil_mask_and_absolute_change_by_hand(clf, enc):
    target = 1
    p = prob(clf, WORDS, target)
    comp = [abs(p - prob(clf, removed(WORDS, set(ORDER[:math.ceil(s * 6)]), "[MASK]"), target))
            for s in (0.05, 0.10, 0.20, 0.50)]
    # sufficiency removes the *bottom* ceil(s n) words: keep the top n - ceil(s n)
    suff = [abs(p - prob(clf, kept_only(WORDS, set(ORDER[:6 - math.ceil(round(s * 6, 9))]), "[MASK]"), target))
            for s in (0.95, 0.90, 0.80, 0.50)]
    result = values_of(clf, enc, ["comprehensiveness-003-code", "sufficiency-003-code"])
    assert result.curves["sufficiency-003-code"].counts == [0, 0, 1, 3]
    assert result.values["comprehensiveness-003-code"] == pytest.approx(np.mean(comp), abs=PROBABILITY)
    assert result.values["sufficiency-003-code"] == pytest.approx(np.mean(suff), abs=PROBABILITY)


def test_paper_003_signed_definition_differs_from_the_code_absolute_change(clf, enc):
    """Def. 2.1 / 2.2 are signed; the thesis code plots |change|. Explaining class 0 with the keyword ranked first,
    removing the keyword *raises* p(0), so the signed deltas are negative and the two conventions disagree."""
    target = 0
    p = prob(clf, WORDS, target)
    comp = [p - prob(clf, removed(WORDS, set(ORDER[:math.ceil(s * 6)]), "[MASK]"), target)
            for s in (0.05, 0.10, 0.20, 0.50)]
    suff = [p - prob(clf, kept_only(WORDS, set(ORDER[:6 - math.ceil(round(s * 6, 9))]), "[MASK]"), target)
            for s in (0.95, 0.90, 0.80, 0.50)]
    assert np.mean(comp) < -0.5  # the case separates the conventions
    ids = ["comprehensiveness-003", "sufficiency-003", "comprehensiveness-003-code", "sufficiency-003-code"]
    result = values_of(clf, enc, ids, target=0)
    assert result.values["comprehensiveness-003"] == pytest.approx(np.mean(comp), abs=PROBABILITY)
    assert result.values["sufficiency-003"] == pytest.approx(np.mean(suff), abs=PROBABILITY)
    assert result.values["comprehensiveness-003-code"] == pytest.approx(np.mean(np.abs(comp)), abs=PROBABILITY)
    assert result.values["sufficiency-003-code"] == pytest.approx(np.mean(np.abs(suff)), abs=PROBABILITY)
    assert "signed" in BY_ID["comprehensiveness-003"].convention
    assert "absolute" in BY_ID["sufficiency-003-code"].convention
    assert REGISTERED["comprehensiveness-003"].params["convention"] == BY_ID["comprehensiveness-003"].convention


def test_aopc_divisor_presets_are_named_by_source(clf, enc):
    p = prob(clf, WORDS, 1)
    # floor(k * 6) for k in 1, 5, 10, 20, 50 %: 0, 0, 0, 1, 3 words
    comp = (p - prob(clf, removed(WORDS, {3}), 1)) + (p - prob(clf, removed(WORDS, {3, 1, 2}), 1))
    suff = (p - prob(clf, kept_only(WORDS, {3}), 1)) + (p - prob(clf, kept_only(WORDS, {3, 1, 2}), 1))
    result = values_of(clf, enc, ["comprehensiveness-eraser", "comprehensiveness-004-text", "sufficiency-004-text"])
    assert result.values["comprehensiveness-eraser"] == pytest.approx(comp / 6, abs=PROBABILITY)  # |B| + 1
    assert result.values["comprehensiveness-004-text"] == pytest.approx(comp / 5, abs=PROBABILITY)  # 1 / |B|
    assert result.values["sufficiency-004-text"] == pytest.approx(suff / 5, abs=PROBABILITY)  # empty bins count 0
    assert "|B|+1" in REGISTERED["comprehensiveness-eraser"].params["convention"]
    assert "|B| = 5" in REGISTERED["comprehensiveness-004-text"].params["convention"]


def test_eraser_official_script_aopc_by_its_formula(clf, enc):
    """ERASER's rationale_benchmark/metrics.py (_instances_aopc): np.average of beta_0 - beta_k over the 5
    thresholds, where beta_k is the model's score on whatever the top-k % rationale is, the empty one included."""
    p = prob(clf, WORDS, 1)
    counts = [math.floor(round(k * 6, 9)) for k in (0.01, 0.05, 0.10, 0.20, 0.50)]
    assert counts == [0, 0, 0, 1, 3]  # three empty sufficiency bins on a six-word sentence
    comp_deltas = [p - prob(clf, removed(WORDS, set(ORDER[:c])), 1) for c in counts]
    suff_deltas = [p - prob(clf, kept_only(WORDS, set(ORDER[:c])), 1) for c in counts]  # [] -> the empty input
    assert suff_deltas[0] > 0.5  # the empty bin is scored, not counted as 0: it decides the number here
    ids = ["comprehensiveness-eraser-official", "sufficiency-eraser-official"]
    result = values_of(clf, enc, ids)
    assert result.values[ids[0]] == pytest.approx(sum(comp_deltas) / len(comp_deltas), abs=PROBABILITY)
    assert result.values[ids[1]] == pytest.approx(sum(suff_deltas) / len(suff_deltas), abs=PROBABILITY)
    for metric_id in ids:
        assert "ERASER script" in REGISTERED[metric_id].params["convention"]
        assert "empty" in REGISTERED[metric_id].params["convention"]


def test_deletion_auc_paper_000_by_hand(clf, enc):
    # K = ceil(0.2 (6 - 1)) = 1 -> 2 steps; x = j / K; the unperturbed input is not on the curve
    p1 = prob(clf, removed(WORDS, {3}), 1)
    p2 = prob(clf, removed(WORDS, {3, 1}), 1)
    result = values_of(clf, enc, ["deletion-auc"])
    assert result.values["deletion-auc"] == pytest.approx(auc([0.5, 1.0], [p1, p2]), abs=PROBABILITY)
    # a ranking that puts the keyword last keeps the prediction: a much larger (worse) AUC
    worst = values_of(clf, enc, ["deletion-auc"], scores=-SCORES)
    assert worst.values["deletion-auc"] > result.values["deletion-auc"] + 0.4  # x runs over [1/K, 1]


@pytest.mark.parametrize("n, k", [(1, 1), (2, 2), (6, 2), (11, 2), (12, 3), (16, 3), (21, 4)])
def test_deletion_step_count_rule(n, k):
    # paper 000 code: K = ceil(0.2 (n - 1)), K = 2 when that is <= 1, never more than the words
    assert steps_limit(BY_ID["deletion-auc"], n, n) == k


def test_insertion_auc_by_hand(clf, enc):
    ys = [prob(clf, kept_only(WORDS, set(ORDER[:j])), 1) for j in range(0, 7)]
    result = values_of(clf, enc, ["insertion-auc"])
    assert result.values["insertion-auc"] == pytest.approx(auc(np.arange(7) / 6, ys), abs=PROBABILITY)
    assert result.curves["insertion-auc"].counts == list(range(7))


def test_decision_flip_by_hand(clf, enc):
    predicted = int(np.argmax(clf.predict_proba([enc])[0]))
    for scores in (SCORES, np.array([3.0, 2.0, 0.0, 1.0, -1.0, -2.0])):
        order = list(rank_words(scores))
        flip = next(j for j in range(1, 7)
                    if np.argmax(clf.predict_proba([clf.encode(" ".join(removed(WORDS, set(order[:j]))))])[0])
                    != predicted)
        assert values_of(clf, enc, ["decision-flip"], scores=scores).values["decision-flip"] == pytest.approx(flip / 6)
    # second ranking puts "excellent" third: the decision flips only after 3 of 6 words
    assert values_of(clf, enc, ["decision-flip"], scores=np.array([3.0, 2.0, 0.0, 1.0, -1.0, -2.0])) \
        .values["decision-flip"] == pytest.approx(0.5)


def test_gold_target_reads_the_gold_class(clf, enc):
    from corpora import Example

    example = Example(id="x", text=TEXT, label=0, label_names=("negative", "positive"))
    p0 = prob(clf, WORDS, 0)
    expected = p0 - prob(clf, removed(WORDS, {3}), 0)
    result = evaluate_scores(clf, enc, [BY_ID["comprehensiveness-004"]], SCORES, RemovalOptions(target="gold"),
                             example=example)
    assert result.values["comprehensiveness-004"] == pytest.approx(expected, abs=PROBABILITY)
    assert expected < -0.5  # removing the keyword raises the negative class


def test_operator_override_and_special_tokens(clf, enc):
    p = prob(clf, WORDS, 1)
    # [UNK] instead of deletion
    result = values_of(clf, enc, ["comprehensiveness-004"], operator="unk")
    assert result.values["comprehensiveness-004"] == pytest.approx(p - prob(clf, removed(WORDS, {3}, "[UNK]"), 1),
                                                                  abs=PROBABILITY)
    # counting [CLS] and [SEP]: n = 8, so 50 % is 4 words and 20 % is floor(1.6) = 1
    counted = values_of(clf, enc, ["comprehensiveness-eraser"], exclude_special=False)
    assert counted.curves["comprehensiveness-eraser"].counts == [0, 0, 0, 1, 4]
    comp = (p - prob(clf, removed(WORDS, {3}), 1)) + (p - prob(clf, removed(WORDS, {3, 1, 2, 0}), 1))
    assert counted.values["comprehensiveness-eraser"] == pytest.approx(comp / 6, abs=PROBABILITY)


def test_one_engine_call_per_operator(clf, enc, monkeypatch):
    calls = []
    real = F.perturb  # the engine builds each operator's rows once (then classifies each distinct input once,
    # in length bands)

    def spy(classifier, encoding, keep, operator, filler=None):
        calls.append((operator, len(keep)))
        return real(classifier, encoding, keep, operator, filler)

    monkeypatch.setattr(F, "perturb", spy)
    values_of(clf, enc, ["comprehensiveness-eraser", "sufficiency-eraser"])
    # 5 + 5 points of both curves in one batch, each distinct perturbed input once: removing 0 words is the input
    # itself and keeping 0 words is fixed at 0 by the preset, so the batch holds 2 + 2 rows
    assert calls == [("delete", 4)]
    calls.clear()
    evaluate_scores(clf, enc, [m for m in METRICS if m.operator != "mlm"], SCORES)  # every preset
    operators = [c[0] for c in calls]
    assert sorted(operators) == sorted(set(operators))  # one call per distinct operator
    assert set(operators) == {"delete", "mask", "pad"}


class ReplaceWithThe:
    """A deterministic stand-in masked-LM filler: every removed word becomes "the"."""

    name = "fill-with-the"

    def fill(self, encoding, keep):
        return [[w if k else "the" for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


def test_deletion_bert_uses_the_filler_through_the_engine(clf, enc):
    p1 = prob(clf, removed(WORDS, {3}, "the"), 1)
    p2 = prob(clf, removed(WORDS, {3, 1}, "the"), 1)
    result = evaluate_scores(clf, enc, [BY_ID["deletion-bert-auc"]], SCORES, RemovalOptions(),
                             filler_options={"filler": ReplaceWithThe()})
    assert result.values["deletion-bert-auc"] == pytest.approx(auc([0.5, 1.0], [p1, p2]), abs=PROBABILITY)


def test_deletion_bert_without_a_prepared_filler_says_what_to_do(clf, enc, isolated_cache, monkeypatch):
    from models import UserFacingError
    from models.mlm import clear_loaded

    clear_loaded()  # the masked LM is looked up again, in the empty cache
    with pytest.raises(UserFacingError, match="DeletionBERT"):
        evaluate_scores(clf, enc, [BY_ID["deletion-bert-auc"]], SCORES)


def test_every_metric_has_metadata_and_an_evaluator():
    for metric in METRICS:
        record = REGISTERED[metric.id]
        assert record.family == "faithfulness" and record.operator == metric.operator and record.preset
        assert record.arrow == ("↑" if metric.higher_is_better else "↓")
    for evaluator_id, ids in EVALUATOR_METRICS.items():
        assert [m.id for m in removal_metrics_of(evaluator_id)] == list(ids)
        assert {m.id for m in EVALUATORS[evaluator_id].metrics} == set(ids)
    assert "deletion-bert-auc" not in {m.id for m in EVALUATORS["faithfulness"].metrics}


def test_bad_options_are_refused():
    with pytest.raises(ValueError):
        RemovalOptions(operator="blank")
    with pytest.raises(ValueError):
        RemovalOptions(target="everything")
    assert options_from(RemovalOptions, {"seed": "3", "exclude_special": "false", "unknown": 1}) == \
        RemovalOptions(seed=3, exclude_special=False)
