"""The class a metric's paper measures, applied to a run (the one target policy itself is ``evaluation/targets.py``).

Paper 002's comprehensiveness and sufficiency read M(x), "the predicted probability of the ground-truth class"
(paper 002 s. 4.2, Eq. 10-11), and its baselines explain the ground-truth label (App. A.1); every other removal
metric's paper reads the predicted class. Each metric records its paper's target (``paper_target``). A run has
one target (the explanations and every metric refer to the same class), so:

- ``default_target``: when the user names no target, a run whose removal metrics all read the gold label in their
  paper (``paper-002``) measures the gold label; any other run the predicted class;
- ``differing``: the metrics whose paper target is not the run's target, to say so next to their numbers;
- ``check_gold_labels``: a paper metric that reads the gold label is refused on examples without one, rather than
  falling back to the predicted class (which the policy does for the other metrics) under the paper's name.
"""
from __future__ import annotations

from corpora import DataError
from evaluation import targets
from evaluation.metric import EVALUATORS
from evaluation.suite.registry import resolve_evaluators


def paper_targets(names: list[str]) -> dict[str, str]:
    """{metric id: the target its paper measures} for the metrics of the evaluators (or metric ids) ``names``
    that record one (the removal metrics)."""
    found = {}
    for evaluator_id in resolve_evaluators(names):
        for metric in EVALUATORS[evaluator_id].metrics:
            paper_target = (metric.params or {}).get("paper_target")
            if paper_target is not None:
                found[metric.id] = paper_target
    return found


def default_target(names: list[str]) -> targets.Choice:
    """The run's target when the user names none: gold where every paper of the chosen metrics reads it."""
    chosen = set(paper_targets(names).values())
    return targets.GOLD if chosen == {targets.GOLD} else targets.PREDICTED


def differing(names: list[str], target) -> list[str]:
    """The metric ids whose paper measures the gold label while the run measures ``target`` (another class)."""
    target = targets.parse(target)
    return [metric for metric, paper in paper_targets(names).items() if paper == targets.GOLD and target != paper]


def check_gold_labels(names: list[str], target, labels: list, dataset: str) -> None:
    """Refuse a run that measures the gold label for a metric whose paper reads it when examples have none."""
    if targets.parse(target) != targets.GOLD:
        return
    gold_metrics = [m for m, paper in paper_targets(names).items() if paper == targets.GOLD]
    missing = sum(label is None for label in labels)
    if gold_metrics and missing:
        raise DataError(f"{', '.join(gold_metrics)} measure the gold label's probability (paper 002 Eq. 10-11), and "
                        f"{missing} of {len(labels)} examples of {dataset} have no gold label. Use a labelled "
                        f"dataset (a 'label' column), or --target predicted (the page: 'as in the sidebar') to "
                        f"measure the predicted class instead, which is not paper 002's protocol.")
