"""Metric metadata: tables and plots orient and colour themselves from it (ferret / Quantus pattern).

Every number a metric produces is reported together with its ``Metric`` record: the family
(faithfulness, plausibility, sanity), the direction, the range, the removal operator it uses and the
paper preset it follows, so a reader never has to guess what "higher" means.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from evaluation import targets
from explainers.params import param

RANDOM_METHOD = "random baseline"  # the method name of the random baseline's rows in every table

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


class MetricValues(dict):
    """{metric_id: value} as every evaluator returns it, plus the curves behind the values and details.

    A plain dict for callers that only want numbers; the dataset runner also stores ``curves``.
    """

    def __init__(self, values=(), curves: dict | None = None, details: dict | None = None):
        super().__init__(values)
        self.curves: dict[str, dict] = curves or {}
        self.details: dict = details or {}


def target_option():
    """The ``target`` option of every option group that has one (the one target policy, ``evaluation/targets.py``)."""
    return param(targets.PREDICTED, "Class explained and measured", targets.HELP, type=str, parse=targets.parse)


def contrast_option():
    """The ``contrast`` option: explain and measure "the target rather than this class"."""
    return param(None, "Contrast class", targets.CONTRAST_HELP, type=str, parse=targets.parse_contrast)


@dataclass(frozen=True)
class RunOptions:
    """Options of a dataset run that belong to no metric (each option group reads its own keys from the run's
    one flat options dict; ``target`` and ``seed`` are shared with the removal metrics' ``RemovalOptions``)."""

    target: str | int = target_option()
    contrast: str | int | None = contrast_option()
    seed: int = param(0, "Seed", "tie-breaking among equal scores and the random baseline's draws", min=0)
    random_orderings: int = param(10, "Random baseline draws", "random orderings (removal metrics) or random "
                                  "score draws (other metrics) per example; 0 = no random baseline", min=0)


@dataclass
class BatchResult:
    """What a batch hook returns for one example."""

    values: dict[str, dict[str, MetricValues]] = field(default_factory=dict)  # evaluator id -> method -> values
    random: dict[str, list[float]] = field(default_factory=dict)  # metric id -> one value per random draw
    random_curves: dict[str, dict] = field(default_factory=dict)  # metric id -> the random draws' curves


@dataclass(frozen=True)
class Evaluator:
    """A group of metrics computed together for one (example, explanation) (Quantus' evaluate_instance /
    evaluate_batch).

    ``compute(classifier, encoding, explanation, example, options) -> MetricValues`` scores one explanation;
    ``example`` is the corpora.Example (gold label, human rationale) or None for free text.

    ``batch(evaluators, classifier, encoding, example, explanations, options, n_random) -> BatchResult`` scores
    every method's explanation of one example (``explanations``: method spec -> Explanation) and ``n_random``
    draws of the random baseline. The dataset runner hands every chosen evaluator that shares a batch hook to
    one call (so all removal metrics of a run share one engine call per operator); None = the default hook
    (``evaluation.batch.each_explanation``: ``compute`` per explanation, random word scores as baseline).

    ``options``: the evaluator's own option group (a ``param()`` dataclass read from a run's flat options dict),
    from which ``cli.py evaluate`` builds its flags and a run checks its settings (LIT's ``config_spec()``);
    None = the run's options only. ``window_hook(evaluator, window)``: work shared ahead by a dataset run's window of
    cells (``evaluation.batch.Window``: the cells' specs, examples and encodings), e.g. NAOPC's bounds in lockstep; the runner calls it before the
    window's cells and knows no family. A failure there only loses the speed-up (the cells do the work).
    """

    id: str
    label: str
    metrics: tuple[Metric, ...]
    compute: Callable
    needs_rationale: bool = False
    needs_gold_label: bool = False
    batch: Callable | None = None
    options: type | None = None
    window_hook: Callable | None = None

    def applies_to(self, example) -> bool:
        """False when the example lacks what the metrics need (a human rationale, a gold label)."""
        if self.needs_rationale and example.rationale is None:
            return False
        return not (self.needs_gold_label and example.label is None)


EVALUATORS: dict[str, Evaluator] = {}
AnyEvaluator = TypeVar("AnyEvaluator", bound=Evaluator)  # register_evaluator returns the subclass it was given


def register_evaluator(evaluator: AnyEvaluator) -> AnyEvaluator:
    if evaluator.id in EVALUATORS:
        raise ValueError(f"evaluator id {evaluator.id!r} registered twice")
    for metric in evaluator.metrics:
        if metric.id not in METRICS:
            register_metric(metric)
    EVALUATORS[evaluator.id] = evaluator
    return evaluator
