"""The bias matrix of paper 000: methods x removal operators, with the cells where a method and a metric
remove words the same way highlighted.

Paper 000 (s. 4, Table 1): Deletion (words deleted) favours LOO-empty, which deletes words, and
DeletionBERT (masked-LM fill) favours Input Marginalization, which fills with the same masked LM; "the
bias in principle also exists in other Deletion variants including Insertion, Sufficiency and
Comprehensiveness". The sweep evaluator ``operator-sweep`` computes the paper-000 Deletion AUC with every
operator so the matrix can show the numbers, not only the warning.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from evaluation.faithfulness.curves import RemovalMetric, RemovalOptions, evaluate_scores
from evaluation.faithfulness.mlm_filler import load_filler
from evaluation.faithfulness.presets import BY_ID, register_removal
from evaluation.faithfulness.removal_provenance import provenance
from evaluation.metric import EVALUATORS, MetricValues
from explainers import ParamError, create_from_spec
from explainers.params import options_from, with_values
from models import OPERATORS, Operator, UserFacingError

OPERATOR_IDS = tuple(op.value for op in Operator)
SWEEP = "operator-sweep"
SWEEP_BASE = BY_ID["deletion-auc"]


def with_operator(metric: RemovalMetric, operator: str, suffix: str | None = None) -> RemovalMetric:
    """The same definition with another preset operator (this file's operator sweep)."""
    return replace(metric, id=f"{metric.id}[{suffix or operator}]", operator=operator,
                   label=f"{metric.label} with {OPERATORS[Operator(operator)].label}")


SWEEP_METRICS = {op: with_operator(SWEEP_BASE, op) for op in OPERATOR_IDS}


def method_operator(method_spec: str) -> str | None:
    """The removal operator a method (``method`` or ``method:preset``) perturbs with, or None."""
    try:
        operator = create_from_spec(method_spec).removal_operator()
    except ParamError:  # an unknown method or preset has no operator to compare
        return None
    return None if operator is None else Operator(operator).value


def reason(method_label: str, operator: str, metric_labels: list[str]) -> str:
    """One line: why a shared operator flatters the method."""
    op = OPERATORS[Operator(operator)].label
    metrics = ", ".join(metric_labels)
    return (f"{method_label} scores words by removing them with {op}, and {metrics} removes them with {op} too: the "
            f"metric re-creates the very inputs the method measured, so it rewards the method by construction "
            f"(paper 000 s. 4: Deletion favours LOO-empty, DeletionBERT favours IM).")


@dataclass
class BiasMatrix:
    """methods x operators. ``values`` (optional numbers, e.g. Deletion AUC per operator), ``metrics`` (which of
    the shown metrics use each operator), ``shared`` (method and some metric share the operator)."""

    methods: list[str]
    operators: list[str]
    method_operators: dict[str, str | None]
    metrics_by_operator: dict[str, list[str]]
    values: pd.DataFrame | None = None
    higher_is_better: bool | None = None
    reasons: dict[tuple[str, str], str] = field(default_factory=dict)

    @property
    def shared(self) -> pd.DataFrame:
        return pd.DataFrame([[self.method_operators.get(m) == op and bool(self.metrics_by_operator.get(op))
                              for op in self.operators] for m in self.methods], index=self.methods,
                            columns=self.operators)

    def ranks(self) -> pd.DataFrame | None:
        """Rank of each method within each operator column (1 = best by the metric's direction)."""
        if self.values is None:
            return None
        return self.values.rank(axis=0, ascending=not self.higher_is_better, method="min")

    @staticmethod
    def _cell(table: pd.DataFrame | None, method: str, op: str):
        if table is None or method not in table.index or op not in table.columns:
            return None
        return table.loc[method, op]

    def to_frame(self) -> pd.DataFrame:
        """Long form: one row per cell (for CSV / JSON export)."""
        rows = []
        shared = self.shared
        ranks = self.ranks()
        for method in self.methods:
            for op in self.operators:
                rows.append({"method": method, "method_operator": self.method_operators.get(method),
                             "operator": op, "metrics_using_operator": ", ".join(self.metrics_by_operator.get(op, [])),
                             "value": self._cell(self.values, method, op), "rank": self._cell(ranks, method, op),
                             "shared": bool(shared.loc[method, op]), "reason": self.reasons.get((method, op), "")})
        return pd.DataFrame(rows)


def bias_matrix(methods: list[str], metric_operators: dict[str, str], method_labels: dict[str, str] | None = None,
                values: pd.DataFrame | None = None, higher_is_better: bool | None = None,
                operators: list[str] | None = None) -> BiasMatrix:
    """Build the matrix.

    ``metric_operators``: metric label -> the operator it removes with (as run, i.e. after any override).
    ``values``: optional methods x operators numbers (the operator sweep).
    """
    operators = list(operators or OPERATOR_IDS)
    by_operator: dict[str, list[str]] = {op: [] for op in operators}
    for label, op in metric_operators.items():
        if op in by_operator:
            by_operator[op].append(label)
    method_ops = {m: method_operator(m) for m in methods}
    labels = method_labels or {}
    matrix = BiasMatrix(list(methods), operators, method_ops, by_operator, values, higher_is_better)
    for method in methods:
        method_op = method_ops[method]
        if method_op is not None and by_operator.get(method_op):
            matrix.reasons[(method, method_op)] = reason(labels.get(method, method), method_op, by_operator[method_op])
    return matrix


# ----- the operator sweep (paper 000 Table 1: one removal metric under every operator) ------------------
def sweep_operators(options: dict | None) -> list[str]:
    """Every operator; mlm only when a masked-LM filler is available (given in options or prepared)."""
    chosen = [op for op in OPERATOR_IDS if op != Operator.MLM.value]
    if (options or {}).get("filler") is not None:
        chosen.append(Operator.MLM.value)
    else:
        try:
            load_filler()
            chosen.append(Operator.MLM.value)
        except UserFacingError:
            pass
    return chosen


def _sweep_metrics(options: dict | None):
    return tuple(SWEEP_METRICS[op] for op in sweep_operators(options))


def _compute_sweep(classifier, encoding, explanation, example, options) -> MetricValues:
    metrics = _sweep_metrics(options)
    removal = options_from(RemovalOptions, with_values(options, operator=None))  # each metric keeps its operator
    result = evaluate_scores(classifier, encoding, list(metrics), explanation.word_scores, removal, example,
                             explanation, filler_options=options)
    details: dict[str, Any] = {m.id: provenance(m, removal) for m in metrics}
    if len(metrics) < len(OPERATOR_IDS):
        details["note"] = "MLM fill left out: no masked-LM filler is prepared."
    return MetricValues(result.values, curves={k: c.to_dict() for k, c in result.curves.items()}, details=details)


if SWEEP not in EVALUATORS:
    register_removal(SWEEP, "Bias matrix: paper-000 Deletion AUC under every removal operator",
                     tuple(SWEEP_METRICS.values()), compute=_compute_sweep, metrics_for=_sweep_metrics,
                     own_operators=True)


def sweep_values(frame: pd.DataFrame, methods: list[str] | None = None) -> pd.DataFrame:
    """methods x operators mean Deletion AUC from a results frame (``evaluation.summary.results_frame``)."""
    part = frame[frame["metric"].isin([m.id for m in SWEEP_METRICS.values()])]
    if part.empty:
        return pd.DataFrame()
    table = part.groupby(["method", "metric"])["value"].mean().unstack("metric")
    table = table.rename(columns={m.id: op for op, m in SWEEP_METRICS.items()})
    table = table[[op for op in OPERATOR_IDS if op in table.columns]]
    if methods is not None:
        table = table.reindex([m for m in methods if m in table.index])
    return table


def sweep_for_input(classifier, encoding, explanations: dict, options: dict | None = None, example=None,
                    operators: list[str] | None = None) -> pd.DataFrame:
    """methods x operators Deletion AUC for one input (the page's live bias matrix)."""
    operators = operators or sweep_operators(options)
    metrics = [SWEEP_METRICS[op] for op in operators]
    removal = options_from(RemovalOptions, with_values(options, operator=None))
    rows = {}
    for method, explanation in explanations.items():
        result = evaluate_scores(classifier, encoding, metrics, explanation.word_scores, removal, example,
                                 explanation, filler_options=options)
        rows[method] = [result.values[m.id] for m in metrics]
    return pd.DataFrame.from_dict(rows, orient="index", columns=operators).astype(np.float64)
