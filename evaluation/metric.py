"""Metric metadata: tables and plots orient and colour themselves from it (ferret / Quantus pattern).

Every number a metric produces is reported together with its ``Metric`` record: the family
(faithfulness, plausibility, sanity), the direction, the range, the removal operator it uses and the
paper preset it follows, so a reader never has to guess what "higher" means.
"""
from __future__ import annotations

from dataclasses import dataclass, field

FAMILIES = {
    "faithfulness": "Faithfulness (does the explanation reflect what the model uses?)",
    "plausibility": "Plausibility: agreement with people, not faithfulness",
    "sanity": "Sanity checks (does the explanation depend on the model?)",
}


@dataclass(frozen=True)
class Metric:
    id: str
    label: str
    family: str
    higher_is_better: bool
    range: tuple[float | None, float | None]
    description: str
    reference: str = ""
    operator: str | None = None  # removal operator (models.perturb.Operator value) where the metric removes words
    preset: str | None = None
    params: dict = field(default_factory=dict)

    @property
    def arrow(self) -> str:
        return "↑" if self.higher_is_better else "↓"

    def to_dict(self) -> dict:
        return {"id": self.id, "label": self.label, "family": self.family, "higher_is_better": self.higher_is_better,
                "range": list(self.range), "description": self.description, "reference": self.reference,
                "operator": self.operator, "preset": self.preset, "params": self.params}


METRICS: dict[str, Metric] = {}


def register_metric(metric: Metric) -> Metric:
    if metric.id in METRICS:
        raise ValueError(f"metric id {metric.id!r} registered twice")
    METRICS[metric.id] = metric
    return metric


def get_metric(metric_id: str) -> Metric:
    try:
        return METRICS[metric_id]
    except KeyError:
        raise KeyError(f"Unknown metric '{metric_id}'. Known: {', '.join(METRICS)}.") from None


@dataclass(frozen=True)
class Evaluator:
    """A group of metrics computed together for one (example, explanation).

    ``compute(classifier, encoding, explanation, example, options) -> {metric_id: value}`` per example;
    ``example`` is the corpora.Example (gold label, human rationale) or None for free text.
    Dataset-level runs (``cli.py evaluate --metrics <group or metric ids>``) call every chosen evaluator
    on every (example, method) pair, store the per-example values and aggregate them with CIs.
    """

    id: str
    label: str
    metrics: tuple[Metric, ...]
    compute: object  # Callable[[TextClassifier, Encoding, Explanation, Example | None, dict], dict[str, float]]
    needs_rationale: bool = False
    needs_gold_label: bool = False


EVALUATORS: dict[str, Evaluator] = {}


def register_evaluator(evaluator: Evaluator) -> Evaluator:
    if evaluator.id in EVALUATORS:
        raise ValueError(f"evaluator id {evaluator.id!r} registered twice")
    for metric in evaluator.metrics:
        if metric.id not in METRICS:
            register_metric(metric)
    EVALUATORS[evaluator.id] = evaluator
    return evaluator
