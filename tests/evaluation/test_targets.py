"""The one target policy (evaluation/targets.py) on the tiny keyword model, whose answer is known by construction
(positive if and only if "excellent" appears): the class of each choice, the gold fallback, and every place that
explains or measures a class (explanations, removal metrics, the dataset runner) agreeing on it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from corpora import Example
from evaluation import targets
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from explainers import create
from explainers.params import options_from

POSITIVE = "the movie was excellent"  # the keyword: the model predicts class 1
NEGATIVE = "the movie was long"  # no keyword: class 0
COMPREHENSIVENESS = BY_ID["comprehensiveness-eraser"]


@pytest.fixture(scope="module")
def logits(keyword_classifier):
    found = {text: keyword_classifier.logits_of(keyword_classifier.encode(text)) for text in (POSITIVE, NEGATIVE)}
    # the premise of the hand-computed targets below: the tiny model learned its keyword rule
    assert int(np.argmax(found[POSITIVE])) == 1 and int(np.argmax(found[NEGATIVE])) == 0
    return found


@pytest.mark.parametrize("choice, gold, expected, how", [
    ("predicted", 0, 1, "predicted"),  # the prediction, whatever the label says
    (None, None, 1, "predicted"),
    ("gold", 0, 0, "gold"),  # the label, although the model predicts 1
    ("gold", None, 1, "predicted (no gold label)"),  # the fallback: no label -> the predicted class
    (0, None, 0, "chosen"),
    ("0", 1, 0, "chosen"),  # a class index written as text (the command line)
    (np.int64(1), None, 1, "chosen"),
])
def test_each_choice_names_the_hand_computed_class(logits, choice, gold, expected, how):
    assert targets.resolve(choice, logits[POSITIVE], gold) == expected
    assert targets.how(choice, gold) == how
    explained = targets.explain_target(choice, gold)
    assert explained == (None if how.startswith("predicted") else expected)


def test_on_the_negative_sentence_predicted_and_gold_swap(logits):
    assert targets.resolve("predicted", logits[NEGATIVE], 1) == 0
    assert targets.resolve("gold", logits[NEGATIVE], 1) == 1
    assert targets.resolve("gold", logits[NEGATIVE], None) == 0


def test_bad_choices_are_refused_with_a_message(logits):
    for bad in ("everything", "", -1, True, 1.5, "gold label"):
        with pytest.raises(ValueError, match="predicted', 'gold' or a class index"):
            targets.parse(bad)
    with pytest.raises(ValueError, match="Target class 2 does not exist; the model has classes 0..1"):
        targets.resolve(2, logits[POSITIVE], None)
    with pytest.raises(ValueError):
        RemovalOptions(target="everything")
    assert RemovalOptions(target="1").target == 1 and options_from(RemovalOptions, {"target": "gold"}).target == "gold"


def test_labels_for_controls():
    assert targets.label("predicted") == "predicted class" and targets.label("gold") == "gold label"
    assert targets.label(1, ("negative", "positive")) == "class 1 (positive)" and targets.label(0) == "class 0"


@pytest.mark.parametrize("choice, gold", [("predicted", 0), ("gold", 0), ("gold", None), (0, None), (1, 0)])
def test_explanation_and_metric_read_the_same_class(keyword_classifier, choice, gold):
    """The explanation explains the policy's class and the metric's curve starts at that class's probability."""
    encoding = keyword_classifier.encode(POSITIVE)
    example = Example(id="x", text=POSITIVE, label=gold, label_names=("negative", "positive"))
    expected = targets.resolve(choice, keyword_classifier.logits_of(encoding), gold)
    explanation = create("leave_one_out").explain(keyword_classifier, encoding, targets.explain_target(choice, gold))
    assert explanation.target == expected
    result = evaluate_scores(keyword_classifier, encoding, [COMPREHENSIVENESS], explanation.word_scores,
                             RemovalOptions(target=choice), example, explanation)
    p = keyword_classifier.predict_proba([encoding])[0]
    assert result.curves[COMPREHENSIVENESS.id].start == pytest.approx(float(p[expected]), abs=1e-5)


def test_an_explanation_of_another_class_is_not_scored(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    of_class_0 = create("leave_one_out").explain(keyword_classifier, encoding, 0)
    with pytest.raises(ValueError, match="explains class 0 but the metric would read class 1"):
        evaluate_scores(keyword_classifier, encoding, [COMPREHENSIVENESS], of_class_0.word_scores,
                        RemovalOptions(target="predicted"), None, of_class_0)


@pytest.fixture(scope="module")
def keyword_folder(keyword_classifier, tmp_path_factory):
    folder = tmp_path_factory.mktemp("keyword-model")
    keyword_classifier.model.save_pretrained(folder)
    keyword_classifier.tokenizer.save_pretrained(folder)
    return str(folder)


@pytest.mark.parametrize("choice, expected", [("gold", [0, 1]), ("predicted", [1, 1]), (0, [0, 0])])
def test_dataset_runner_explains_and_scores_the_policy_class(keyword_classifier, keyword_folder, isolated_cache, tmp_path,
                                                             choice, expected):
    """Two copies of the positive sentence: one labelled 0 (against the model), one without a label (gold falls
    back to the prediction, 1)."""
    from evaluation.suite.runner import evaluate_example

    path = tmp_path / "two.jsonl"
    path.write_text(json.dumps({"text": POSITIVE, "label": 0}) + "\n" + json.dumps({"text": POSITIVE}) + "\n")
    p = keyword_classifier.predict_proba([keyword_classifier.encode(POSITIVE)])[0]
    for index, target in enumerate(expected):
        cell = evaluate_example({"model": keyword_folder, "dataset": f"file:{path}", "index": index,
                                 "methods": ["leave_one_out"], "evaluators": ["eraser"],
                                 "options": {"target": choice, "random_orderings": 0}})
        assert cell["explanations"]["leave_one_out"]["target"] == target
        start = cell["curves"]["leave_one_out"][COMPREHENSIVENESS.id]["start"]
        assert start == pytest.approx(float(p[target]), abs=1e-5)


def test_runs_refuse_a_bad_target_before_any_work(keyword_folder, tmp_path):
    from evaluation.runs.store import ResultStore
    from evaluation.sanity.dataset import start_sanity
    from evaluation.suite.runner import start_evaluation

    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps({"text": POSITIVE, "label": 1}) + "\n")
    store = ResultStore(tmp_path / "results.sqlite")
    with pytest.raises(ValueError, match="class index"):
        start_evaluation(keyword_folder, f"file:{path}", ["saliency"], ["eraser"], options={"target": "both"},
                         store=store)
    with pytest.raises(ValueError, match="class index"):
        start_sanity(keyword_folder, f"file:{path}", ["saliency"], target="both", store=store)
    assert store.list_runs() == []
