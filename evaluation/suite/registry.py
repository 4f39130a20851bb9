"""Evaluators (metric groups) by string id, like ``explainers/registry.py`` for methods.

``cli.py evaluate --metrics``, the pages and the dataset runner name an evaluator or a single metric by id.
Every module that registers evaluators is imported here, explicitly: a new family of metrics registers its
evaluators in its own module and is added to the import below.

``resolve_evaluators`` reads evaluator or metric ids; ``evaluation/batch.py`` runs the chosen evaluators on every
method's explanation of one example through their batch hooks (``Evaluator.batch``), so neither the runner nor a
family that scores other families' measures needs this module (the runner imports it only to have every family registered).
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
from evaluation.metric import EVALUATORS, METRICS
from evaluation.plausibility import metrics as plausibility_metrics  # noqa: F401  (registers its evaluators)


def option_groups() -> list[type]:
    """Every registered evaluator's own option group (``Evaluator.options``), each once, in registration order:
    ``cli.py evaluate`` makes its flags from them and a run checks them before any work."""
    return list(dict.fromkeys(e.options for e in EVALUATORS.values() if e.options is not None))


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
