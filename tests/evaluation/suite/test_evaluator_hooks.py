"""What the runner and the CLI read from an ``Evaluator`` record, knowing no family: its per-window hook (called
once per window of cells with that window, before its cells; a failing hook only loses the speed-up) and its option
group (the CLI's flags, a run's early check of its settings). The window reads each text once for the hooks and
the cells."""
from __future__ import annotations

from dataclasses import dataclass

import pytest
from roar_fixtures import save_keyword_model, write_keyword_csv

from corpora import load_dataset
from evaluation.faithfulness import naopc, soft
from evaluation.faithfulness.f_fidelity import FFidOptions
from evaluation.faithfulness.naopc_bounds import NaopcOptions
from evaluation.faithfulness.soft import SoftOptions
from evaluation.metric import EVALUATORS, METRICS, Evaluator, Metric, MetricValues
from evaluation.runs.jobs import BATCH_WINDOW
from evaluation.runs.store import ResultStore
from evaluation.suite.registry import option_groups
from evaluation.suite.runner import run_evaluation
from explainers import cache as cache_module
from explainers.params import ParamError, param
from models import windows as windows_module

WORDS = Metric(id="test-word-count", label="Words", family="faithfulness", higher_is_better=True, range=(0, None),
               description="the number of words the explanation scores")


@dataclass(frozen=True)
class CountOptions:
    test_count_scale: int = param(1, "Scale", "multiplies the count", min=1)


def count_words(classifier, encoding, explanation, example, options) -> MetricValues:
    return MetricValues({WORDS.id: float(len(explanation.words))})


@pytest.fixture()
def counting_evaluator(monkeypatch):
    """An evaluator registered for one test only, whose window hook records the specs it is given."""
    windows: list[list[dict]] = []

    def hook(evaluator, window):
        assert evaluator.id == "test-count"
        windows.append(window.specs)

    chosen = Evaluator(id="test-count", label="Words", metrics=(WORDS,), compute=count_words, options=CountOptions,
                       window_hook=hook)
    monkeypatch.setitem(EVALUATORS, chosen.id, chosen)
    monkeypatch.setitem(METRICS, WORDS.id, WORDS)
    return chosen, windows


@pytest.fixture()
def model_and_data(keyword_classifier, tmp_path):
    folder = str(save_keyword_model(keyword_classifier, tmp_path / "model"))
    return folder, write_keyword_csv(tmp_path / "data.csv", BATCH_WINDOW + 3, seed=5)


def test_the_runner_calls_the_window_hook_once_per_window_with_its_cells(counting_evaluator, model_and_data, tmp_path):
    _, windows = counting_evaluator
    folder, dataset = model_and_data
    store, summary = run_evaluation(folder, dataset, ["leave_one_out"], ["test-count"],
                                    options={"random_orderings": 0}, store=ResultStore(tmp_path / "r.sqlite"))
    assert summary.status == "finished" and summary.done == BATCH_WINDOW + 3
    # the cells in windows of BATCH_WINDOW, each window's specs handed over once, in the cells' order
    assert [len(w) for w in windows] == [BATCH_WINDOW, 3]
    assert [s["index"] for w in windows for s in w] == list(range(BATCH_WINDOW + 3))
    assert all(s["evaluators"] == ["test-count"] and s["model"] == folder for w in windows for s in w)


def test_a_failing_window_hook_only_loses_the_speed_up(counting_evaluator, model_and_data, tmp_path, monkeypatch):
    chosen, _ = counting_evaluator

    def broken(evaluator, window):
        raise RuntimeError("no prefill today")

    monkeypatch.setitem(EVALUATORS, chosen.id, Evaluator(id=chosen.id, label=chosen.label, metrics=chosen.metrics,
                                                         compute=count_words, window_hook=broken))
    folder, dataset = model_and_data
    store, summary = run_evaluation(folder, dataset, ["leave_one_out"], ["test-count"], limit=4,
                                    options={"random_orderings": 0}, store=ResultStore(tmp_path / "r.sqlite"))
    assert summary.status == "finished" and summary.done == 4 and not summary.errors


def test_a_run_checks_each_chosen_evaluators_options_before_any_work(counting_evaluator, model_and_data, tmp_path):
    folder, dataset = model_and_data
    store = ResultStore(tmp_path / "r.sqlite")
    with pytest.raises(ParamError, match="test_count_scale"):
        run_evaluation(folder, dataset, ["leave_one_out"], ["test-count"], limit=2,
                       options={"test_count_scale": 0}, store=store)
    assert store.list_runs() == []  # refused before the run was created


def test_the_option_groups_come_from_the_registered_evaluators():
    groups = option_groups()
    assert {NaopcOptions, SoftOptions, FFidOptions} <= set(groups)
    assert len(groups) == len(set(groups))  # the NAOPC and soft presets share one group each
    assert EVALUATORS[naopc.EVALUATOR.id].window_hook is naopc.prefill_window
    assert EVALUATORS[soft.EVALUATOR.id].window_hook is None


def test_each_text_is_encoded_once_by_the_hooks_and_the_cells(model_and_data, tmp_path, monkeypatch):
    """Integrated gradients (the runner's IG paths ahead) and NAOPC (its bounds in lockstep) both read the window's
    inputs before the cells do: every text is encoded once, where each of the three read it before."""
    folder, dataset = model_and_data
    encoded = []
    original = windows_module.build_encoding

    def counting(tokenizer, text, pair=None, *args, **kwargs):
        encoded.append(text)
        return original(tokenizer, text, pair, *args, **kwargs)

    monkeypatch.setattr(windows_module, "build_encoding", counting)
    monkeypatch.setattr(cache_module, "DEFAULT_CACHE", None)  # every explanation computed (the IG paths ahead)
    store, summary = run_evaluation(folder, dataset, ["integrated_gradients"], ["naopc"], limit=4,
                                    options={"random_orderings": 0}, store=ResultStore(tmp_path / "r.sqlite"))
    assert summary.status == "finished" and summary.done == 4 and not summary.errors
    texts = [e.text for e in load_dataset(dataset, limit=4)]
    assert sorted(encoded) == sorted(texts)
