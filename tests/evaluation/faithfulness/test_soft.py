"""Soft sufficiency / comprehensiveness against a direct computation with the same seed on the tiny model.

The direct path draws the same numpy uniforms, builds the masked word embeddings itself and runs the Hugging Face
model directly (one copy at a time, not through ``TextClassifier.forward_embeds``), then applies the paper's
formulas (Zhao & Aletras 2023, normalized as Carton et al. 2020) in plain numpy.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tolerances import float32_tolerance

from evaluation.baselines import orderings_seed, random_explanation
from evaluation.batch import evaluate_batch
from evaluation.faithfulness import soft
from evaluation.metric import EVALUATORS, METRICS

TEXT = "the film was excellent fun"
SCORES = np.array([0.1, -0.4, 0.6, 2.0, 0.5])


@pytest.fixture(scope="module")
def clf(keyword_classifier):
    return keyword_classifier


@pytest.fixture(scope="module")
def enc(clf):
    return clf.encode(TEXT)


def p_target(model, ids, embeds, target):
    with torch.no_grad():
        logits = model(inputs_embeds=embeds[None], attention_mask=torch.ones_like(ids)[None]).logits
    return float(torch.softmax(logits, -1)[0, target])


def direct(clf, enc, scores, target, seed, samples):
    model = clf.model
    ids = torch.tensor(enc.input_ids)
    embeds = model.get_input_embeddings()(ids).detach()
    imp = (scores - scores.min()) / (scores.max() - scores.min())
    words = np.array(enc.token_word)
    draws = np.random.default_rng(orderings_seed(seed, enc.key)).random((samples, len(ids), embeds.shape[1]))
    is_word = torch.tensor(words >= 0)
    full = p_target(model, ids, embeds, target)
    empty = p_target(model, ids, embeds * ~is_word[:, None], target)
    room = max(0.0, full - empty)

    def masked(prob_of_word, s):
        p = np.array([prob_of_word[w] if w >= 0 else 0.0 for w in words])
        keep = torch.tensor(draws[s] >= p[:, None], dtype=embeds.dtype)
        return p_target(model, ids, embeds * keep, target)

    nc = np.mean([max(0.0, full - masked(imp, s)) for s in range(samples)]) / room
    ns = np.mean([(1 - max(0.0, full - masked(1 - imp, s))) - (1 - room) for s in range(samples)]) / room
    return nc, ns


def test_soft_metrics_equal_a_direct_computation_with_the_same_seed(clf, enc):
    target = 1
    explanation = random_explanation(enc, target, clf.labels[target], SCORES, 0, 0)
    values = soft.compute(clf, enc, explanation, None, {"seed": 3, "soft_samples": 6})
    nc, ns = direct(clf, enc, SCORES, target, seed=3, samples=6)
    room = values.details["soft-comprehensiveness"]["p_full"] - values.details["soft-comprehensiveness"]["p_all_masked"]
    assert room > 0.5  # the keyword model: x is confidently positive, the all-masked input is not
    assert values["soft-comprehensiveness"] == pytest.approx(nc, abs=float32_tolerance(1.0) / room)
    assert values["soft-sufficiency"] == pytest.approx(ns, abs=float32_tolerance(1.0) / room)
    again = soft.compute(clf, enc, explanation, None, {"seed": 3, "soft_samples": 6})
    assert dict(again) == dict(values)  # seeded
    other = soft.compute(clf, enc, explanation, None, {"seed": 4, "soft_samples": 6})
    assert dict(other) != dict(values)


def test_an_explanation_that_marks_the_keyword_beats_one_that_hides_it(clf, enc):
    good = np.array([0.0, 0.0, 0.0, 1.0, 0.0])
    bad = 1.0 - good
    options = {"soft_samples": 30}
    on = soft.compute(clf, enc, random_explanation(enc, 1, "positive", good, 0, 0), None, options)
    off = soft.compute(clf, enc, random_explanation(enc, 1, "positive", bad, 0, 0), None, options)
    assert on["soft-comprehensiveness"] > off["soft-comprehensiveness"] + 0.5
    assert on["soft-sufficiency"] > off["soft-sufficiency"] + 0.5


def test_importance_is_min_max_and_constant_scores_give_one_half():
    assert soft.importance([1.0, 3.0, 2.0]).tolist() == [0.0, 1.0, 0.5]
    assert soft.importance([-3.0, 1.0], rank_by="absolute").tolist() == [1.0, 0.0]
    assert soft.importance([2.0, 2.0]).tolist() == [0.5, 0.5]


def test_registered_with_a_random_band(clf, enc):
    assert "soft" in EVALUATORS and METRICS["soft-sufficiency"].higher_is_better
    explanation = random_explanation(enc, 1, "positive", SCORES, 0, 0)
    batch = evaluate_batch(["soft"], clf, enc, None, {"m": explanation}, {"soft_samples": 4}, 10)
    assert len(batch.random["soft-comprehensiveness"]) == 10
    assert np.isfinite(batch.values["soft"]["m"]["soft-sufficiency"])


def test_the_batch_hook_gives_the_values_of_one_explanation_at_a_time(clf, enc):
    """every method and random explanation in one batched call, the clean pass shared with the removal
    metrics, equals the default hook (``compute`` per explanation, random scores drawn the same way)."""
    from evaluation.batch import each_explanation
    explanations = {"a": random_explanation(enc, 1, "positive", SCORES, 0, 0),
                    "b": random_explanation(enc, 1, "positive", SCORES[::-1].copy(), 0, 0)}
    options = {"seed": 2, "soft_samples": 3}
    fast = soft.soft_batch([EVALUATORS["soft"]], clf, enc, None, explanations, options, 4)
    slow = each_explanation([EVALUATORS["soft"]], clf, enc, None, explanations, options, 4)
    tolerance = float32_tolerance(1.0) / 0.5  # a float32 probability over a room above 0.5 (asserted above)
    for name in explanations:
        for metric_id in soft.BASE_IDS:
            assert fast.values["soft"][name][metric_id] == pytest.approx(slow.values["soft"][name][metric_id],
                                                                         abs=tolerance)
    for metric_id in soft.BASE_IDS:
        assert fast.random[metric_id] == pytest.approx(slow.random[metric_id], abs=tolerance)


def test_the_default_follows_the_paper_and_the_presets_pin_their_mask_count(clf, enc):
    explanation = random_explanation(enc, 1, "positive", SCORES, 0, 0)
    assert soft.SoftOptions().soft_samples == 1  # Zhao & Aletras score one perturbed copy per instance
    batch = evaluate_batch(["soft", "soft-zhao-aletras", "soft-20-masks"], clf, enc, None, {"m": explanation},
                           {"seed": 1, "soft_samples": 5}, 0)
    tolerance = float32_tolerance(1.0) / 0.5
    for preset, samples in (("soft-zhao-aletras", 1), ("soft-20-masks", 20), ("soft", 5)):
        alone = soft.compute(clf, enc, explanation, None, {"seed": 1, "soft_samples": samples})
        suffix = soft.BY_ID[preset].suffix
        for metric_id in soft.BASE_IDS:
            key = f"{metric_id}[{suffix}]" if suffix else metric_id
            assert batch.values[preset]["m"][key] == pytest.approx(alone[metric_id], abs=tolerance)
            assert batch.values[preset]["m"].details[key]["samples"] == samples
            assert key in METRICS


# ----- ill-conditioned normalization --------------------------------------------------------------------------
def test_a_tiny_all_masked_drop_is_flagged_ill_conditioned_and_its_value_kept():
    """Soft-NC / Soft-NS divide by d = p(y|x) - p(y|x0); on an SST-2 sentence d = 0.0036 gave Soft-NC
    ~125. Here a smooth tiny model has d ~ 0.015 on "the cast was fine": the values (the paper's formula by hand,
    ``direct``) are far outside [0, 1], kept as computed, and flagged with their denominator."""
    from smooth_models import smooth_classifier

    clf = smooth_classifier(seed=2)
    enc = clf.encode("the cast was fine")
    scores = np.arange(enc.n_words, dtype=float)
    target = int(np.argmax(clf.predict_proba([enc])[0]))
    values = soft.compute(clf, enc, random_explanation(enc, target, clf.labels[target], scores, 0, 0), None,
                          {"seed": 0, "soft_samples": 4})
    details = values.details["soft-comprehensiveness"]
    room = details["p_full"] - details["p_all_masked"]
    assert 0 < room < soft.ILL_CONDITIONED and details["denominator"] == pytest.approx(room, abs=1e-12)
    assert details["ill_conditioned"] and values.details["soft-sufficiency"]["ill_conditioned"]
    nc, ns = direct(clf, enc, scores, target, seed=0, samples=4)
    assert values["soft-comprehensiveness"] == pytest.approx(nc, abs=float32_tolerance(1.0) / room)
    assert values["soft-sufficiency"] == pytest.approx(ns, abs=float32_tolerance(1.0) / room)
    assert not (0.0 <= nc <= 1.0 and 0.0 <= ns <= 1.0)  # what the flag warns about


def test_a_clear_all_masked_drop_is_not_flagged(clf, enc):
    values = soft.compute(clf, enc, random_explanation(enc, 1, "positive", SCORES, 0, 0), None, {})
    assert values.details["soft-comprehensiveness"]["denominator"] > 0.5
    assert not values.details["soft-comprehensiveness"]["ill_conditioned"]
    assert soft.ill_conditioned(0.049) and not soft.ill_conditioned(0.05) and not soft.ill_conditioned(0.0)


def test_dataset_means_leave_ill_conditioned_inputs_out_and_say_how_many(tmp_path):
    """The run's table (CLI and app: ``run_table`` / ``wide_table``): flagged values are kept in the cells, left out
    of the mean and its interval, counted, and averaged on their own."""
    from evaluation.metric import RANDOM_METHOD
    from evaluation.runs.store import ResultStore
    from evaluation.statistics import bootstrap_ci
    from evaluation.suite.run_report import run_table, wide_table
    from evaluation.suite.runner import KIND

    values = {f"e{i}": 0.1 * i for i in range(8)}
    flagged = {"f1": 125.0, "f2": 40.0}  # ill-conditioned inputs: the same rows of the random baseline are too
    store = ResultStore(tmp_path / "runs.sqlite")
    run_id = store.create_run(KIND, {"model": "m", "dataset": "d", "options": {}}, total=10)
    for key, value in {**values, **flagged}.items():
        flag = {"ill_conditioned": True} if key in flagged else {}
        store.put_cell(run_id, key, {"rows": [
            {"method": "saliency", "metric": "soft-comprehensiveness", "value": value, **flag},
            {"method": RANDOM_METHOD, "metric": "soft-comprehensiveness", "value": value / 2, "orderings": [value / 2],
             **flag}]})
    table = run_table(store, run_id)
    row = table[table["method"] == "saliency"].iloc[0]
    kept = np.array(sorted(values.values()))
    assert row["n"] == 8 and row["mean"] == pytest.approx(kept.mean(), abs=1e-12)
    assert (row["low"], row["high"]) == pytest.approx(
        (bootstrap_ci(kept).low, bootstrap_ci(kept).high), abs=1e-12)
    assert row["excluded"] == 2 and row["excluded_mean"] == pytest.approx((125.0 + 40.0) / 2, abs=1e-12)
    assert row["random_mean"] == pytest.approx(kept.mean() / 2, abs=1e-12)  # the random side without them too
    text = wide_table(table).loc["saliency"].iloc[0]
    assert "2 ill-conditioned excluded: mean 82.500" in text


def test_the_one_input_table_marks_an_ill_conditioned_value():
    from smooth_models import smooth_classifier

    from evaluation.faithfulness import other_measures

    clf = smooth_classifier(seed=2)
    enc = clf.encode("the cast was fine")  # d ~ 0.015 (above)
    target = int(np.argmax(clf.predict_proba([enc])[0]))
    explanation = random_explanation(enc, target, clf.labels[target], np.arange(enc.n_words, dtype=float), 0, 0)
    table = other_measures.measures_table(clf, enc, {"m": explanation}, ["soft"], {}, n_random=2)
    rows = table[table["method"] == "m"]
    assert rows["ill_conditioned"].all() and '"ill_conditioned": true' in rows["details"].iloc[0]
    assert other_measures.wide(table)["m"].str.endswith("(ill-conditioned)").all()
