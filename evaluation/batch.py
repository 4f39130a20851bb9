"""Every chosen evaluator on every method's explanation of one example, through the evaluators' batch hooks
(``Evaluator.batch``; Quantus' ``evaluate_batch``): the dataset runner and the one-input tables call it, and it
knows no metric family. Evaluators are found in ``metric.EVALUATORS``; the module that registers them is imported
by the caller (``evaluation/suite/registry.py`` imports every family)."""
from __future__ import annotations

from evaluation.baselines import generic_random_values
from evaluation.metric import EVALUATORS, BatchResult, Evaluator, RunOptions
from explainers.params import options_from


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
