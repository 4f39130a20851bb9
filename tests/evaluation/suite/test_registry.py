"""The evaluator registry: explicit imports register every evaluator, and the batch hooks (Quantus'
evaluate_batch) give the same numbers as each evaluator's per-explanation ``compute``."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from conftest import ROOT
from tolerances import float32_tolerance

from evaluation.batch import evaluate_batch
from evaluation.metric import EVALUATORS, BatchResult, Evaluator, Metric, MetricValues
from evaluation.suite.registry import resolve_evaluators
from explainers import create_from_spec

TEXT = "a film with excellent music and a very old plot"
EVERY_EVALUATOR = {"eraser", "paper-004", "paper-002", "paper-003", "deletion", "deletion-bert", "insertion",
                   "decision-flip", "faithfulness", "operator-sweep", "known-feature", "plausibility",
                   "plausibility-sweep"}


class ReplaceWithThe:
    """A stand-in masked LM (so the operator sweep's MLM column does not depend on a prepared filler)."""

    name = "fill-with-the"

    def fill(self, encoding, keep):
        return [[w if k else "the" for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


@pytest.mark.slow  # a fresh Python process imports torch and transformers (seconds each)
def test_importing_the_registry_alone_registers_every_evaluator():
    code = "import evaluation.suite.registry as r; print(','.join(sorted(r.EVALUATORS)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.strip().split(",")) >= EVERY_EVALUATOR


def test_metric_ids_select_their_evaluator_and_unknown_names_fail():
    assert resolve_evaluators(["deletion-auc", "eraser", "comprehensiveness-eraser"]) == ["deletion", "eraser"]
    with pytest.raises(KeyError, match="Unknown metric or metric group 'nonsense'"):
        resolve_evaluators(["nonsense"])


@pytest.fixture(scope="module")
def explained(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    explanations = {spec: create_from_spec(spec).explain(keyword_classifier, encoding)
                    for spec in ("leave_one_out", "saliency", "leave_one_out:paper-000-unk")}
    return encoding, explanations


@pytest.mark.parametrize("options", [{}, {"operator": "unk", "seed": 3}])
def test_removal_batch_equals_each_evaluators_own_compute(keyword_classifier, explained, options):
    encoding, explanations = explained
    options = {**options, "filler": ReplaceWithThe()}
    chosen = ["eraser", "deletion", "operator-sweep", "paper-004"]
    batch = evaluate_batch(chosen, keyword_classifier, encoding, None, explanations, options, n_random=10)
    assert list(batch.values) == chosen
    for evaluator_id in chosen:
        for method, explanation in explanations.items():
            alone = EVALUATORS[evaluator_id].compute(keyword_classifier, encoding, explanation, None, options)
            got = batch.values[evaluator_id][method]
            assert set(got) == set(alone)
            for metric_id, value in alone.items():  # batched with other rows: other padding, float32 noise only
                assert got[metric_id] == pytest.approx(value, abs=float32_tolerance(max(1.0, abs(value))))
            assert got.curves.keys() == alone.curves.keys()
    # the random baseline: 10 orderings of every removal metric, the sweep's included
    sweep_ids = {m.id for m in EVALUATORS["operator-sweep"].metrics}
    assert sweep_ids <= set(batch.random) and all(len(v) == 10 for v in batch.random.values())
    assert set(batch.random_curves) == set(batch.random)


def test_evaluators_sharing_a_hook_get_one_call_and_others_the_default(keyword_classifier, explained, monkeypatch):
    encoding, explanations = explained
    calls = []

    def counting_hook(evaluators, classifier, encoding, example, explanations, options, n_random):
        calls.append([e.id for e in evaluators])
        return BatchResult(values={e.id: {name: MetricValues({f"{e.id}.n": float(len(x.words))})
                                          for name, x in explanations.items()} for e in evaluators},
                           random={f"{e.id}.n": [0.0] * n_random for e in evaluators})

    def word_count(classifier, encoding, explanation, example, options):
        return MetricValues({"test.words": float(np.count_nonzero(np.isfinite(explanation.word_scores)))})

    for name, hook, compute in (("test-a", counting_hook, None), ("test-b", counting_hook, None),
                                ("test-default", None, word_count)):
        metric = Metric(f"{name}.n" if hook else "test.words", name, "faithfulness", True, (0, None), "test")
        monkeypatch.setitem(EVALUATORS, name, Evaluator(name, name, (metric,), compute, batch=hook))
    batch = evaluate_batch(["test-a", "eraser", "test-default", "test-b"], keyword_classifier, encoding, None,
                           explanations, {}, n_random=10)
    assert calls == [["test-a", "test-b"]]  # one call for both evaluators of the hook
    assert list(batch.values) == ["test-a", "eraser", "test-default", "test-b"]
    n_words = encoding.n_words
    assert all(v["test.words"] == n_words for v in batch.values["test-default"].values())
    assert batch.values["test-b"]["saliency"]["test-b.n"] == n_words
    # the default hook's random baseline: 10 explanations with random scores, each of n words
    assert batch.random["test.words"] == [n_words] * 10 and batch.random["test-a.n"] == [0.0] * 10
