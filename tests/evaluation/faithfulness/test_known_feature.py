"""Paper 003's known-feature task: the dataset builder, the ground-truth metrics by hand, and the method ordering
(IG, LIME and KernelSHAP find the appended word; the plain gradient does not)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from corpora import DataError, Example
from corpora.known_feature import LABEL_WORDS, load_known_feature, make_known_feature, parse_known_feature_id
from evaluation.faithfulness.known_feature import ground_truth_metrics, known_feature_table
from explainers import REGISTRY

SENTENCES = ["the plot is thin", "a warm and funny film", "it drags", "an honest , moving story"]


def examples(texts):
    return [Example(id=f"s{i}", text=t, label=i % 2, label_names=("negative", "positive")) for i, t in enumerate(texts)]


def test_builder_appends_the_label_word_and_marks_it():
    built = make_known_feature(examples(SENTENCES), seed=7)
    for original, item in zip(SENTENCES, built):
        assert item.text == f"{original} {LABEL_WORDS[item.label]}"
        assert item.rationale == (0,) * len(original.split()) + (1,)
        assert item.extra["source"].startswith("s")
    again = make_known_feature(examples(SENTENCES), seed=7)
    assert [e.label for e in again] == [e.label for e in built]  # seeded


def test_labels_are_random_and_balanced():
    many = examples(["some text"] * 2000)
    labels = np.array([e.label for e in make_known_feature(many, seed=1)])
    assert 0.45 < labels.mean() < 0.55
    other = np.array([e.label for e in make_known_feature(many, seed=2)])
    assert (labels != other).mean() > 0.4  # another seed, other labels
    original = np.array([e.label for e in many])
    assert abs(np.corrcoef(labels, original)[0, 1]) < 0.1  # decorrelated from the source labels


def test_fraction_and_bad_input():
    none = make_known_feature(examples(SENTENCES), seed=0, fraction=0.0)
    assert [e.text for e in none] == SENTENCES and all(not any(e.rationale) for e in none)
    with pytest.raises(DataError):
        make_known_feature([Example("p", "a", 0, ("x", "y"), pair="b")])
    with pytest.raises(DataError):
        make_known_feature(examples(SENTENCES), label_words=("very bad", "good"))
    with pytest.raises(DataError):
        parse_known_feature_id("known-feature:test")
    assert parse_known_feature_id("known-feature:train:3") == ("train", 3)


def test_dev_split_from_sst2():
    dev = load_known_feature("known-feature:dev", limit=5)
    assert len(dev) == 5 and all(e.text.split()[-1] in LABEL_WORDS for e in dev)
    assert all(e.text.split()[-1] == LABEL_WORDS[e.label] for e in dev)


def test_ground_truth_metrics_by_hand():
    scores = np.array([0.1, 0.5, -2.0, 0.3])
    values = ground_truth_metrics(scores, [0, 0, 0, 1])
    # signed ranking 1, 3, 0, 2: the truth (word 3) is second
    assert values["known-feature.precision@k"] == 0.0
    assert values["known-feature.rank"] == 2.0
    assert values["known-feature.rank-fraction"] == pytest.approx(2 / 4)
    assert values["known-feature.mass"] == pytest.approx(0.3 / 2.9)
    two = ground_truth_metrics(scores, [0, 1, 1, 0])
    assert two["known-feature.precision@k"] == 0.5  # top-2 = {1, 3}, truth = {1, 2}
    assert two["known-feature.rank"] == 4.0  # word 2 is ranked last
    assert ground_truth_metrics(scores, [0, 0, 0, 0]) == {}
    assert ground_truth_metrics(scores, [0, 0, 0, 1], n_units=6)["known-feature.rank-fraction"] == pytest.approx(2 / 6)


@pytest.fixture(scope="module")
def known_feature_model():
    """A tiny BERT trained on the known-feature task built from filler sentences (label words from its vocabulary)."""
    from tiny_models import FILLER, tiny_bert, tiny_tokenizer, train_on

    from models import TextClassifier

    rng = random.Random(0)
    base = [Example(id=str(i), text=" ".join(rng.choice(FILLER) for _ in range(rng.randint(4, 10))), label=None,
                    label_names=("negative", "positive")) for i in range(560)]
    data = make_known_feature(base, seed=1, label_words=("awful", "great"))
    tokenizer, model = tiny_tokenizer(), tiny_bert(seed=0)
    train_on(model, tokenizer, [e.text for e in data[:500]], [e.label for e in data[:500]], steps=120)
    return TextClassifier(model, tokenizer, name="tiny-known-feature", device="cpu"), data[500:520]


@pytest.mark.training  # its fixture trains the tiny model on the known-feature task
def test_pipeline_reproduces_paper_003_ordering_on_a_tiny_model(known_feature_model):
    classifier, test = known_feature_model
    accuracy = (classifier.predict_proba([classifier.encode(e.text) for e in test]).argmax(1)
                == [e.label for e in test]).mean()
    assert accuracy == 1.0  # the appended word is learned
    # LIME with paper 000's settings: paper 003's (captum's token-id kernel, Lasso 0.01, [MASK]) finds the word in
    # only ~3 of 4 inputs on this 2-layer model, which never saw [MASK]; on MiniLM it scores 1.0 (slow test below)
    top = [m for m in ("integrated_gradients:paper-003", "lime:paper-000", "kernel_shap:paper-003")
           if m.split(":")[0] in REGISTRY]
    assert "integrated_gradients:paper-003" in top
    table, _ = known_feature_table(test, classifier, top + ["saliency:paper-003"],
                                   explain=lambda spec, enc: _explain(classifier, spec, enc))
    overlap = table[table["metric"] == "known-feature.precision@k"].set_index("method")["mean"]
    for method in top:
        assert overlap[method] >= 0.9, method
    assert overlap["saliency:paper-003"] <= min(overlap[m] for m in top) - 0.3
    assert overlap["random (expected)"] < 0.2


def _explain(classifier, spec, encoding):
    from explainers import create

    method, _, preset = spec.partition(":")
    return create(method, preset=preset or None).explain(classifier, encoding)


@pytest.mark.integration
@pytest.mark.slow
def test_minilm_known_feature_model_reproduces_the_ordering(isolated_cache):
    """The real pipeline: MiniLM fine-tuned on the task (a reduced recipe), then IG / LIME / KernelSHAP vs the
    gradient and gradient x input of paper 003 (about 2 minutes on a quiet 2-core CPU)."""
    from evaluation.faithfulness.known_feature import (
        KnownFeatureRecipe,
        load_known_feature_classifier,
        prepare_known_feature_model,
        read_manifest,
    )
    from models.training import TrainConfig

    recipe = KnownFeatureRecipe(train_limit=480, eval_limit=100,
                                train=TrainConfig(epochs=1.0, lr=3e-4, batch_size=32, max_length=64, seed=0))
    folder = prepare_known_feature_model(recipe, log=lambda message: None)
    assert folder.is_relative_to(isolated_cache) and read_manifest(recipe)["accuracy"] >= 0.95
    classifier = load_known_feature_classifier(recipe)
    methods = ["integrated_gradients:paper-003", "lime:paper-003", "kernel_shap:paper-003", "saliency:paper-003",
               "input_x_gradient:paper-003"]
    methods = [m for m in methods if m.split(":")[0] in REGISTRY]
    table, _ = known_feature_table(load_known_feature("known-feature:dev", limit=12), classifier, methods,
                                   explain=lambda spec, enc: _explain(classifier, spec, enc))
    overlap = table[table["metric"] == "known-feature.precision@k"].set_index("method")["mean"]
    best = [m for m in methods if not m.startswith(("saliency", "input_x_gradient"))]
    for method in best:
        assert overlap[method] >= 0.9, method
    for method in ("saliency:paper-003", "input_x_gradient:paper-003"):
        assert overlap[method] <= 0.7, method
