"""Evaluators (metric groups) by string id, like ``explainers/registry.py`` for methods.

``cli.py evaluate --metrics``, the pages and the dataset runner name an evaluator or a single metric by id.
Every module that registers evaluators is imported here, explicitly: a new family of metrics registers its
evaluators in its own module and is added to the import below.

``evaluate_batch`` runs the chosen evaluators on every method's explanation of one example through their batch
hooks (``Evaluator.batch``), so the runner needs no knowledge of any metric family.
"""
from __future__ import annotations

from evaluation.agreement import (
    dataset,  # noqa: F401  (registers agreement between methods, a pairwise group)
    measures,  # noqa: F401  (registers the shape measures: complexity, Gini, top-10 share)
)

# these modules register their evaluators when imported
from evaluation.faithfulness import (  # noqa: F401  # noqa: F401  (the newer measures register their evaluators)
    bias,
    f_fidelity,  # noqa: F401  (registers F-Fidelity's evaluator)
    known_feature,
    naopc,
    perturbation_shift,
    presets,
    soft,
)
from evaluation.faithfulness.random_band import generic_random_values
from evaluation.metric import EVALUATORS, METRICS, BatchResult, Evaluator, RunOptions
from evaluation.plausibility import metrics as plausibility_metrics  # noqa: F401  (registers its evaluators)
from explainers.params import options_from


def evaluator(evaluator_id: str) -> Evaluator:
    try:
        return EVALUATORS[evaluator_id]
    except KeyError:
        raise KeyError(f"Unknown metric group '{evaluator_id}'. Known groups: {', '.join(EVALUATORS)}.") from None


def resolve_evaluators(names: list[str]) -> list[str]:
    """Evaluator ids from evaluator ids or metric ids (a metric id selects the first evaluator that has it)."""
    chosen = []
    for name in names:
        if name in EVALUATORS:
            evaluator_id = name
        else:
            owners = [e.id for e in EVALUATORS.values() if any(m.id == name for m in e.metrics)]
            if not owners:
                raise KeyError(f"Unknown metric or metric group '{name}'. Known groups: {', '.join(EVALUATORS)}; "
                               f"metrics: {', '.join(METRICS)}.")
            evaluator_id = owners[0]
        if evaluator_id not in chosen:
            chosen.append(evaluator_id)
    return chosen


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
