"""Faithfulness measures of one input that are not removal curves (NAOPC, soft sufficiency / comprehensiveness):
every method's value next to the random baseline (mean, 95 % band, "not distinguishable" flag), for the page
(which only draws the table) and for export.

The removal metrics have their own one-input report (``one_input.py``); these measures run through their
evaluators' batch hooks (``evaluation.batch.evaluate_batch``), exactly as in a dataset run.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from evaluation.baselines import NOT_DISTINGUISHABLE, band, inside
from evaluation.batch import evaluate_batch
from evaluation.faithfulness import naopc, soft
from evaluation.metric import EVALUATORS, RANDOM_METHOD

MEASURES = (naopc.EVALUATOR.id, soft.EVALUATOR.id)  # evaluator ids (normalized and in-distribution measures)
OPTIONS = {evaluator_id: EVALUATORS[evaluator_id].options for evaluator_id in MEASURES}  # their param() schemas


def _side(value: float, random_mean: float, higher_is_better: bool) -> str:
    if not (np.isfinite(value) and np.isfinite(random_mean)):
        return ""
    return "better than random" if (value > random_mean) == higher_is_better else "worse than random"


def measures_table(classifier, encoding, explanations: dict, evaluator_ids: list[str], options: dict | None = None,
                   example=None, n_random: int = 10) -> pd.DataFrame:
    """Long form: one row per (metric, method) and one per metric for the random baseline."""
    options = dict(options or {})
    if not explanations or not evaluator_ids:
        return pd.DataFrame()
    result = evaluate_batch(evaluator_ids, classifier, encoding, example, explanations, options, n_random)
    rows = []
    for evaluator_id in evaluator_ids:
        for metric in EVALUATORS[evaluator_id].metrics:
            draws = result.random.get(metric.id, [])
            random_mean = float(np.nanmean(draws)) if len(draws) and np.isfinite(draws).any() else float("nan")
            low, high = band(draws) if len(draws) else (float("nan"), float("nan"))
            common = {"metric": metric.id, "label": metric.label, "direction": metric.arrow,
                      "preset": EVALUATORS[evaluator_id].label, "reference": metric.reference,
                      "random_mean": random_mean, "random_low": low, "random_high": high}
            for method, values in result.values.get(evaluator_id, {}).items():
                value = float(values.get(metric.id, float("nan")))
                flagged = len(draws) > 0 and inside(value, (low, high))
                details = values.details.get(metric.id, {})
                rows.append({**common, "method": method, "value": value,
                             "vs_random": NOT_DISTINGUISHABLE if flagged else
                             _side(value, random_mean, metric.higher_is_better),
                             "ill_conditioned": bool(details.get("ill_conditioned", False)),
                             "details": json.dumps(details, default=str)})
            if len(draws):
                rows.append({**common, "method": RANDOM_METHOD, "value": random_mean,
                             "vs_random": f"{len(draws)} random explanations", "details": ""})
    return pd.DataFrame(rows)


def wide(table: pd.DataFrame, decimals: int = 3) -> pd.DataFrame:
    """metric x method cells, "≈ random" inside the random band, "(ill-conditioned)" on a value whose normalization
    divides by almost nothing (soft metrics), the band in the random baseline's column."""
    if table.empty:
        return table
    cells: dict[str, dict[str, str]] = {}
    for _, row in table.iterrows():
        if row["method"] == RANDOM_METHOD:
            text = f"{row['value']:.{decimals}f} [{row['random_low']:.{decimals}f}, {row['random_high']:.{decimals}f}]"
        else:
            text = f"{row['value']:.{decimals}f}" + (" ≈ random" if row["vs_random"] == NOT_DISTINGUISHABLE else "")
            if row.get("ill_conditioned") is True:  # a tiny normalization denominator (soft.py): kept, flagged
                text += " (ill-conditioned)"
        cells.setdefault(f"{row['label']} {row['direction']}", {"preset": row["preset"]})[row["method"]] = text
    return pd.DataFrame.from_dict(cells, orient="index")
