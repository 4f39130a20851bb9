"""Every chosen evaluator on every method's explanation of one example, through the evaluators' batch hooks
(``Evaluator.batch``; Quantus' ``evaluate_batch``): the dataset runner and the one-input tables call it, and it
knows no metric family. Evaluators are found in ``metric.EVALUATORS``; the module that registers them is imported
by the caller (``evaluation/suite/registry.py`` imports every family). A ``Window`` is a run's window of cells with
its inputs read once, what an evaluator's ``window_hook`` is given."""
from __future__ import annotations

import threading

from corpora import load_dataset
from evaluation.baselines import generic_random_values
from evaluation.metric import EVALUATORS, BatchResult, Evaluator, RunOptions
from explainers.params import frozen_options, options_from
from models import cached_classifier
from models.documents import read_input


def evaluator(evaluator_id: str) -> Evaluator:
    try:
        return EVALUATORS[evaluator_id]
    except KeyError:
        raise KeyError(f"Unknown metric group '{evaluator_id}'. Known groups: {', '.join(EVALUATORS)}.") from None


def each_explanation(evaluators: list[Evaluator], classifier, encoding, example, explanations: dict, options: dict,
                     n_random: int) -> BatchResult:
    """The default batch hook: ``compute`` on each explanation; the random baseline scores ``n_random``
    explanations with uniformly random word scores (for metrics that read scores rather than rankings)."""
    result = BatchResult()
    for chosen in evaluators:
        result.values[chosen.id] = {name: chosen.compute(classifier, encoding, explanation, example, options)
                                    for name, explanation in explanations.items()}
    if n_random > 0 and explanations:
        explained_class = next(iter(explanations.values())).target
        seed = options_from(RunOptions, options).seed
        for chosen in evaluators:
            for metric_id, values in generic_random_values(chosen, classifier, encoding, example, options,
                                                           explained_class, n_random, seed).items():
                result.random.setdefault(metric_id, values)
    return result


def evaluate_batch(evaluator_ids: list[str], classifier, encoding, example, explanations: dict, options: dict,
                   n_random: int) -> BatchResult:
    """Every evaluator on every explanation of one example: evaluators that share a batch hook go to it in one
    call; the results are merged in the order of ``evaluator_ids`` (the first value of a metric wins)."""
    options = frozen_options(options)  # each option group parsed once for all evaluators (a run's: once per run)
    hooks: dict = {}
    for evaluator_id in evaluator_ids:
        chosen = evaluator(evaluator_id)
        hooks.setdefault(chosen.batch or each_explanation, []).append(chosen)
    merged = BatchResult()
    for hook, group in hooks.items():
        part = hook(group, classifier, encoding, example, explanations, options, n_random)
        merged.values.update(part.values)
        for metric_id, values in part.random.items():
            merged.random.setdefault(metric_id, values)
        for metric_id, curve in part.random_curves.items():
            merged.random_curves.setdefault(metric_id, curve)
    merged.values = {e: merged.values[e] for e in evaluator_ids if e in merged.values}
    return merged


class Window:
    """A dataset run's window of cells (one run: the same model, dataset, methods and options in every spec), its
    examples and their encodings read once, on first use, for the evaluators' ``window_hook``s and the cells run in
    this process: each text is encoded once, not once per hook and again in its cell."""

    def __init__(self, specs: list[dict]):
        self.specs = specs
        self.spec = specs[0]
        self.options: dict = self.spec.get("options", {})
        self._lock = threading.RLock()  # a window's cells and hooks run in one thread; the lock keeps it safe anyway
        self._examples: list | None = None
        self._encodings: dict[int, object] = {}

    @property
    def classifier(self):
        return cached_classifier(self.spec["model"])

    def holds(self, spec: dict) -> bool:
        """Whether ``spec`` is one of this window's cells (its example and encoding can be served from here)."""
        return any(spec is mine or spec == mine for mine in self.specs)

    def example(self, index: int):
        with self._lock:
            if self._examples is None:
                self._examples = load_dataset(self.spec["dataset"], limit=max(s["index"] for s in self.specs) + 1,
                                              label_names=self.classifier.labels)
            return self._examples[index]

    def encoding(self, index: int):
        """The example's encoding as a cell reads it (long documents in windows, never cut)."""
        with self._lock:
            if index not in self._encodings:
                example = self.example(index)
                self._encodings[index] = read_input(self.classifier, example.text, example.pair, self.options)
            return self._encodings[index]
