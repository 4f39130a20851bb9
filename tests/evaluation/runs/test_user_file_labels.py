"""Every consumer of a user file reads its gold labels as the model's classes: dataset runs,
sanity runs, ROAR studies and the command line, on the tiny keyword model (labels negative, positive) saved
to a folder. Inconsistent capitals ('POSITIVE' next to 'negative') sort the file's own names the wrong way
round, so before the fix every gold label here was flipped."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest
from roar_fixtures import save_keyword_model
from tiny_models import KEYWORD, keyword_sentences

import cli
from evaluation.roar.data import study_data
from evaluation.roar.study import build_config
from evaluation.roar.training import Variant
from evaluation.runs.store import ResultStore
from evaluation.sanity.dataset import sanity_cell, start_sanity
from evaluation.suite.runner import evaluate_example, start_evaluation

NAMES = {0: "negative", 1: "POSITIVE"}  # sorted on their own: POSITIVE = 0, negative = 1


def _write(path: Path, n: int, seed: int, names=NAMES) -> str:
    texts, labels = keyword_sentences(n, seed=seed)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows((t, names[y]) for t, y in zip(texts, labels))
    return f"file:{path}"


@pytest.fixture(scope="module")
def folder(keyword_classifier, tmp_path_factory):
    return str(save_keyword_model(keyword_classifier, tmp_path_factory.mktemp("labels") / "model"))


def _gold(text: str) -> int:
    return int(KEYWORD in text.split())


def test_dataset_runs_explain_and_store_the_models_gold_class(folder, tmp_path):
    dataset = _write(tmp_path / "mixed.csv", 4, seed=5)
    store, _run_id, cells = start_evaluation(folder, dataset, ["leave_one_out"], ["plausibility"], None,
                                             {"target": "gold", "random_orderings": 0},
                                             ResultStore(tmp_path / "r.sqlite"))
    results = [evaluate_example(cell.spec) for cell in cells]
    texts, truth = keyword_sentences(4, seed=5)
    assert [r["label"] for r in results] == truth == [_gold(t) for t in texts] == [0, 1, 0, 1]
    # target "gold": the class explained is the model's class of the file's label name
    assert [r["explanations"]["leave_one_out"]["target"] for r in results] == truth


def test_sanity_runs_use_the_models_gold_class(folder, tmp_path):
    dataset = _write(tmp_path / "mixed.csv", 2, seed=6)
    _store, _run_id, cells = start_sanity(folder, dataset, ["leave_one_out"], check="head", seeds=[1],
                                          store=ResultStore(tmp_path / "s.sqlite"))
    _texts, truth = keyword_sentences(2, seed=6)
    assert [sanity_cell(c.spec)["label"] for c in cells] == truth


def test_roar_studies_retrain_on_the_models_gold_class(folder, tmp_path):
    train = _write(tmp_path / "train.csv", 20, seed=1)
    test = _write(tmp_path / "test.csv", 10, seed=2)
    config = build_config(model=folder, train_data=train, test_data=test, measures=["loo"], ratios=[50], seeds=[0],
                          variant=Variant(trainable="head", train_size=20, test_size=10, epochs=1))
    data = study_data(config)
    _texts, truth = keyword_sentences(20, seed=1)
    assert data.labels["train"] == truth


def test_the_command_line_refuses_a_label_the_model_does_not_have(folder, tmp_path, capsys, isolated_cache):
    dataset = _write(tmp_path / "typo.csv", 4, seed=3, names={0: "negative", 1: "positiv"})
    code = cli.main(["evaluate", "--model", folder, "--dataset", dataset, "--methods", "leave_one_out",
                     "--metrics", "plausibility", "--random-orderings", "0", "--limit", "4"])
    err = capsys.readouterr().err
    assert code != 0
    assert "typo.csv" in err and "the label matches none of the model's labels (negative, positive" in err
    assert "positiv'" not in err  # the file's content is never quoted
    assert "Traceback" not in err
