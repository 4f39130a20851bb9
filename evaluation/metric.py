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
