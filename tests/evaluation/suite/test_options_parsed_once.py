"""A dataset run parses each option group of its options once (``explainers.params.FrozenOptions``), not at every
call site per example, evaluator and cell; the values are those of plain options parsed at each site."""
from __future__ import annotations

import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv

from evaluation.faithfulness.curves import RemovalOptions
from evaluation.faithfulness.naopc_bounds import NaopcOptions
from evaluation.metric import RunOptions
from evaluation.runs.store import ResultStore
from evaluation.suite.runner import evaluate_example, run_evaluation, start_evaluation
from evaluation.summary import results_frame
from explainers import cache as cache_module
from explainers import params

GROUPS = (RunOptions, RemovalOptions, NaopcOptions)
OPTIONS = {"random_orderings": 2, "operator": "mask", "naopc_exact_words": 5}


@pytest.fixture()
def model_and_data(keyword_classifier, tmp_path, monkeypatch):
    monkeypatch.setattr(cache_module, "DEFAULT_CACHE", None)  # every explanation computed
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    return folder, write_keyword_csv(tmp_path / "data.csv", 3, seed=5)


@pytest.fixture()
def parses(monkeypatch):
    """How many times each option group is parsed (``coerce``: the one parser every options reader ends in)."""
    counted: dict[type, int] = {}
    real = params.coerce

    def counting(params_class, values):
        counted[params_class] = counted.get(params_class, 0) + 1
        return real(params_class, values)

    monkeypatch.setattr(params, "coerce", counting)
    return counted


def test_a_dataset_run_parses_each_option_group_once(model_and_data, tmp_path, parses):
    """Three examples, a removal curve (ERASER) and NAOPC (its window hook and its cells): once per group."""
    folder, dataset = model_and_data
    store, summary = run_evaluation(folder, dataset, ["saliency"], ["eraser", "naopc"], None, OPTIONS,
                                    ResultStore(tmp_path / "run.sqlite"))
    assert summary.status == "finished" and summary.done == 3, summary.errors
    assert {group: parses.get(group, 0) for group in GROUPS} == {group: 1 for group in GROUPS}
    frame = results_frame(store, summary.run_id)
    assert {"comprehensiveness-eraser", "naopc-comprehensiveness"} <= set(frame["metric"])


def test_the_values_are_those_of_plain_options_parsed_at_each_site(model_and_data, tmp_path):
    """The same cells with the run's frozen options and with a plain copy of them (parsed at every site, as
    before) store the same rows."""
    folder, dataset = model_and_data
    _store, _run, cells = start_evaluation(folder, dataset, ["saliency"], ["eraser", "naopc"], None, OPTIONS,
                                           ResultStore(tmp_path / "cells.sqlite"))
    assert isinstance(cells[0].spec["options"], params.FrozenOptions)
    assert all(cell.spec["options"] is cells[0].spec["options"] for cell in cells)  # one object per run
    for cell in cells:
        frozen = evaluate_example(cell.spec)
        plain = evaluate_example({**cell.spec, "options": dict(cell.spec["options"])})
        assert frozen["rows"] == plain["rows"]


def test_a_bad_option_still_fails_before_any_work(model_and_data, tmp_path, parses):
    folder, dataset = model_and_data
    with pytest.raises(params.ParamError, match="naopc_beam"):
        run_evaluation(folder, dataset, ["saliency"], ["naopc"], None, {**OPTIONS, "naopc_beam": 0},
                       ResultStore(tmp_path / "bad.sqlite"))
    assert parses.get(RemovalOptions, 0) == 0  # no cell ran
