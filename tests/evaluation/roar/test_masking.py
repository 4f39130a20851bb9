"""ROAR masking and retraining on tiny models: word counts by the papers' rules, cumulative selection, masked
inputs from the perturbation engine, masked encodings for Recursive ROAR, and the retraining variants."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from tolerances import float32_tolerance

from evaluation.roar.masking import (
    check_operator,
    eligible_words,
    masked_batch,
    masked_encoding,
    random_scores,
    scores_on_original,
    select_removed,
    words_to_remove,
)
from evaluation.roar.training import Variant, macro_f1, retrain_and_evaluate, start_model, trainable_names
from models import ModelError, perturb


@pytest.mark.parametrize("n, ratio, rule, expected", [
    (10, 0.3, "floor", 3), (7, 0.25, "floor", 1), (4, 0.2, "floor", 0), (10, 1.0, "floor", 10), (10, 0.0, "floor", 0),
    (10, 0.1, "ceil", 1),   # max(1, ceil(9 * 0.1)) = 1
    (21, 0.2, "ceil", 4),   # ceil(20 * 0.2) = 4
    (4, 0.1, "ceil", 1),    # at least one word (paper 000 code)
    (11, 0.3, "ceil", 3), (5, 0.0, "ceil", 0), (0, 0.5, "floor", 0),
])
def test_words_to_remove_follows_each_papers_rule(n, ratio, rule, expected):
    assert words_to_remove(n, ratio, rule) == expected


def test_selection_is_cumulative_and_never_touches_ineligible_words():
    scores = np.array([0.1, 0.9, np.nan, 0.5, -2.0, 0.7])
    eligible = np.array([True, True, True, True, True, False])
    first = select_removed(scores, eligible, None, 2)
    assert np.flatnonzero(first).tolist() == [1, 3]  # 0.7 is ineligible
    # a later step with other scores keeps words 1 and 3 removed (importance +inf) and adds the best other one
    later = select_removed(np.array([0.0, -5.0, 0.2, -5.0, 0.1, 9.0]), eligible, first, 3)
    assert np.flatnonzero(later).tolist() == [1, 2, 3]
    assert np.flatnonzero(select_removed(scores, eligible, None, 5, "absolute")).tolist() == [0, 1, 2, 3, 4]
    assert np.flatnonzero(select_removed(scores, eligible, None, 3, "absolute")).tolist() == [1, 3, 4]  # |-2| first
    assert select_removed(scores, eligible, None, 0).sum() == 0


def test_only_the_first_segment_of_a_pair_is_eligible(keyword_classifier):
    encoding = keyword_classifier.encode("the movie was excellent", "a film")
    assert eligible_words(encoding, "first").tolist() == [True] * 4 + [False] * 2
    assert eligible_words(encoding, "all").all()


def test_random_scores_depend_on_seed_and_example_only():
    a = random_scores("sst2:train:5", 7, seed=0)
    assert np.array_equal(a, random_scores("sst2:train:5", 7, seed=0))
    assert not np.array_equal(a, random_scores("sst2:train:5", 7, seed=1))
    assert not np.array_equal(a, random_scores("sst2:train:6", 7, seed=0))
    assert a.shape == (7,) and 0 <= a.min() and a.max() < 1


def test_masked_batch_rows_are_the_perturbation_engines(keyword_classifier):
    encodings = [keyword_classifier.encode(t) for t in ("the movie was excellent", "unbelievably good film")]
    removed = [np.array([False, False, True, True]), np.array([True, False, False])]
    for operator in ("mask", "delete"):
        batch = masked_batch(keyword_classifier, encodings, removed, operator)
        for row, (encoding, gone) in enumerate(zip(encodings, removed)):
            expected = perturb(keyword_classifier, encoding, ~gone[None, :], operator)
            assert batch.input_ids[row] == list(expected.input_ids[0])
    masked = masked_batch(keyword_classifier, encodings, removed, "mask")
    mask_id = keyword_classifier.tokenizer.mask_token_id
    assert masked.input_ids[1].count(mask_id) == 3  # "unbelievably" = un ##believ ##ably: one [MASK] per token
    deleted = masked_batch(keyword_classifier, encodings, removed, "delete")
    assert deleted.input_ids[0] == list(keyword_classifier.encode("the movie").input_ids)


def test_masked_encoding_has_the_engines_ids_and_maps_words_back(keyword_classifier):
    encoding = keyword_classifier.encode("unbelievably the movie was excellent")
    removed = np.array([True, False, False, True, False])
    masked, word_map = masked_encoding(keyword_classifier, encoding, removed, "mask")
    engine = perturb(keyword_classifier, encoding, ~removed[None, :], "mask")
    assert list(masked.input_ids) == list(engine.input_ids[0])
    assert word_map.tolist() == [0, 1, 2, 3, 4] and masked.n_words == 5
    deleted, word_map = masked_encoding(keyword_classifier, encoding, removed, "delete")
    assert deleted.words == ("the", "movie", "excellent") and word_map.tolist() == [1, 2, 4]
    back = scores_on_original(np.array([0.1, 0.2, 0.3]), word_map, 5)
    assert back[[1, 2, 4]].tolist() == [0.1, 0.2, 0.3] and np.isneginf(back[[0, 3]]).all()


def test_the_zero_operator_is_refused_with_a_reason():
    with pytest.raises(ModelError, match="zero-embedding operator is not available"):
        check_operator("zero")


def test_macro_f1_equals_sklearn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    gold, predicted = rng.integers(0, 3, 50), rng.integers(0, 3, 50)
    assert macro_f1(gold, predicted, 3) == pytest.approx(f1_score(gold, predicted, average="macro"))


def _data(classifier, n=48):
    from tiny_models import keyword_sentences

    texts, labels = keyword_sentences(n, seed=5)
    batch = classifier.batch_of([classifier.encode(t) for t in texts])
    return batch, labels


@pytest.mark.parametrize("trainable, changed, frozen", [
    ("head", ["bert.pooler.dense.weight", "classifier.weight"],
     ["bert.encoder.layer.1.attention.self.query.weight", "bert.embeddings.word_embeddings.weight"]),
    ("last-k", ["bert.encoder.layer.1.attention.self.query.weight", "classifier.weight"],
     ["bert.encoder.layer.0.attention.self.query.weight", "bert.embeddings.word_embeddings.weight"]),
    ("all", ["bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.attention.self.query.weight",
             "classifier.weight"], []),
])
def test_each_variant_trains_exactly_its_parameters(keyword_classifier, trainable, changed, frozen):
    batch, labels = _data(keyword_classifier)
    variant = Variant(trainable=trainable, last_k=1, train_size=48, test_size=48, epochs=1, batch_size=16)
    start = {k: v.clone() for k, v in start_model(keyword_classifier, variant, seed=3).state_dict().items()}
    model, metrics = retrain_and_evaluate(keyword_classifier, batch, labels, batch, labels, variant, seed=3)
    after = model.state_dict()
    for name in changed:
        assert not torch.equal(start[name], after[name]), name
    for name in frozen:
        assert torch.equal(start[name], after[name]), name
    original = keyword_classifier.model.state_dict()
    assert torch.equal(original["bert.embeddings.word_embeddings.weight"],
                       keyword_classifier.model.state_dict()["bert.embeddings.word_embeddings.weight"])
    names = set(trainable_names(model, variant))
    assert set(changed) <= names and not set(frozen) & names
    assert metrics["variant"] == variant.label() and trainable in ("head", "last-k", "all")
    assert 0.0 <= metrics["accuracy"] <= 1.0 and metrics["n_train"] == 48


def test_the_head_is_new_per_seed_and_the_same_for_the_same_seed(keyword_classifier):
    variant = Variant()
    a, b, c = (start_model(keyword_classifier, variant, seed).state_dict()["classifier.weight"] for seed in (1, 1, 2))
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert not torch.equal(a, keyword_classifier.model.state_dict()["classifier.weight"])
    encoder = "bert.encoder.layer.0.output.dense.weight"
    assert torch.equal(start_model(keyword_classifier, variant, 1).state_dict()[encoder],
                       keyword_classifier.model.state_dict()[encoder])


def test_retraining_is_deterministic_for_a_seed(keyword_classifier):
    batch, labels = _data(keyword_classifier, 32)
    variant = Variant(trainable="head", train_size=32, test_size=32, epochs=1, batch_size=8)
    first = retrain_and_evaluate(keyword_classifier, batch, labels, batch, labels, variant, seed=4)[0].state_dict()
    second = retrain_and_evaluate(keyword_classifier, batch, labels, batch, labels, variant, seed=4)[0].state_dict()
    assert all(torch.equal(first[k], second[k]) for k in first)


def test_base_start_point_needs_a_built_in_model(keyword_classifier):
    with pytest.raises(ModelError, match="built-in model"):
        start_model(keyword_classifier, Variant(init="base"), seed=0)


def test_variant_rejects_nonsense():
    with pytest.raises(ValueError, match="Unknown retraining variant"):
        Variant(trainable="everything")
    with pytest.raises(ValueError, match="train size"):
        Variant(train_size=1)


def test_cached_encoder_features_give_the_models_own_logits(keyword_classifier):
    from evaluation.roar.training import HEAD_FORWARD, encoder_features

    batch, _ = _data(keyword_classifier, 20)
    model = start_model(keyword_classifier, Variant(), seed=7).eval()
    features = encoder_features(model, batch, keyword_classifier.tokenizer.pad_token_id, 128, torch.device("cpu"))
    with torch.no_grad():
        replayed = HEAD_FORWARD["bert"](model, features)
    direct = keyword_classifier.with_model(model, fingerprint="reinit-7").predict_logits(batch)
    assert np.allclose(replayed.double().numpy(), direct, rtol=0, atol=float32_tolerance(direct))


def test_the_head_variant_trains_on_cached_features_and_other_variants_run_the_encoder(keyword_classifier):
    batch, labels = _data(keyword_classifier, 32)
    head = retrain_and_evaluate(keyword_classifier, batch, labels, batch, labels,
                                Variant(train_size=32, test_size=32, epochs=2, batch_size=8), seed=1)[1]
    last = retrain_and_evaluate(keyword_classifier, batch, labels, batch, labels,
                                Variant(trainable="last-k", last_k=1, train_size=32, test_size=32, epochs=1), seed=1)[1]
    assert head["train_record"]["head_training"] == "cached encoder features" and head["train_record"]["steps"] == 8
    assert last["train_record"]["head_training"] == "full forward passes"
    assert head["accuracy"] >= 0.9  # the frozen keyword encoder separates the classes: the new head learns it
