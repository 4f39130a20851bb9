"""Faithfulness of several explanations of one input: every chosen metric, the random baseline, the flags and
the curves, ready for the page (which only draws them) and for export."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from evaluation.baselines import DEFAULT_ORDERINGS, NOT_DISTINGUISHABLE
from evaluation.faithfulness.curves import OrderResult, RemovalMetric, RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from evaluation.faithfulness.random_band import RandomBaseline, random_baseline
from evaluation.faithfulness.removal_provenance import provenance
from evaluation.metric import RANDOM_METHOD
from explainers.params import frozen_options, options_from
from models import OPERATORS, Operator


@dataclass
class InputReport:
    metrics: list[RemovalMetric]
    options: RemovalOptions
    results: dict[str, OrderResult]  # method -> values and curves
    random: RandomBaseline | None

    def table(self) -> pd.DataFrame:
        """Long form: one row per (metric, method) plus the random baseline, with direction and provenance."""
        rows = []
        for metric in self.metrics:
            info = provenance(metric, self.options)
            low, high = self.random.band(metric.id) if self.random is not None else (np.nan, np.nan)
            random_mean = self.random.mean(metric.id) if self.random is not None else np.nan
            arrow = "↑" if metric.higher_is_better else "↓"
            common = {"metric": metric.id, "label": metric.label, "direction": arrow,
                      "preset": metric.preset_label, "operator": info["operator_label"], "target": self.options.target,
                      "special_tokens": info["special_tokens"], "tie_break_seed": self.options.seed,
                      "random_mean": random_mean, "random_low": low, "random_high": high}
            for method, result in self.results.items():
                value = result.values.get(metric.id, np.nan)
                flagged = self.random is not None and self.random.flag(metric.id, value)
                rows.append({**common, "method": method, "value": value,
                             "vs_random": NOT_DISTINGUISHABLE if flagged else _side(value, random_mean, metric)})
            if self.random is not None:
                rows.append({**common, "method": RANDOM_METHOD, "value": random_mean,
                             "vs_random": f"{self.random.n} orderings, seed {self.random.seed}"})
        return pd.DataFrame(rows)

    def wide(self, decimals: int = 3) -> pd.DataFrame:
        """metric x method cells; "≈ random" marks values inside the random band; the band in the last column."""
        table = self.table()
        if table.empty:
            return table
        cells: dict[str, dict[str, str]] = {}
        for _, row in table.iterrows():
            name = f"{row['label']} {row['direction']}"
            if row["method"] == RANDOM_METHOD:
                text = (f"{row['value']:.{decimals}f} [{row['random_low']:.{decimals}f}, "
                        f"{row['random_high']:.{decimals}f}]")
            else:
                flag = " ≈ random" if row["vs_random"] == NOT_DISTINGUISHABLE else ""
                text = f"{row['value']:.{decimals}f}{flag}"
            cells.setdefault(name, {"preset": row["preset"], "operator": row["operator"]})[row["method"]] = text
        return pd.DataFrame.from_dict(cells, orient="index")

    def curve(self, metric_id: str, value: str = "score") -> dict:
        """x, one line per method and the random mean / band, for ``value`` "score" or "change" (start - score)."""
        out: dict[str, Any] = {"metric": metric_id, "x": None, "methods": {}, "random": None, "summary": {}}
        for method, result in self.results.items():
            curve = result.curves.get(metric_id)
            if curve is None:
                continue
            scores = np.asarray(curve.scores)
            out["x"] = curve.x
            out["methods"][method] = ((curve.start - scores) if value == "change" else scores).tolist()
            out["summary"][method] = result.values.get(metric_id)
            out["start"] = curve.start
        if self.random is not None and metric_id in self.random.curves:
            band = self.random.curve_band(metric_id)
            start = band["start"]
            if value == "change":
                out["random"] = {"mean": [start - v for v in band["mean"]], "low": [start - v for v in band["high"]],
                                 "high": [start - v for v in band["low"]]}
            else:
                out["random"] = {k: band[k] for k in ("mean", "low", "high")}
            out["random"]["summary"] = self.random.mean(metric_id)
            out["x"] = out["x"] or band["x"]
        return out


def _side(value: float, random_mean: float, metric: RemovalMetric) -> str:
    if not np.isfinite(value) or not np.isfinite(random_mean):
        return ""
    better = value > random_mean if metric.higher_is_better else value < random_mean
    return "better than random" if better else "worse than random"


def evaluate_input(classifier, encoding, explanations: dict, metric_ids: list[str], options: dict | None = None,
                   example=None, n_random: int = DEFAULT_ORDERINGS) -> InputReport:
    """Every metric for every explanation (one engine call per operator each) and ``n_random`` random orderings."""
    options = frozen_options(options)
    removal = options_from(RemovalOptions, options)
    metrics = [BY_ID[m] for m in metric_ids]
    results = {method: evaluate_scores(classifier, encoding, metrics, explanation.word_scores, removal, example,
                                       explanation, filler_options=options)
               for method, explanation in explanations.items()}
    baseline = random_baseline(classifier, encoding, metrics, removal, example, n=n_random,
                               filler_options=options) if n_random > 0 else None
    return InputReport(metrics, removal, results, baseline)


def operators_of(metric_ids: list[str], options: dict | None) -> dict[str, str]:
    """Metric label -> the operator it removes with under these options (for the bias matrix)."""
    removal = options_from(RemovalOptions, options)
    return {BY_ID[m].label + f" ({BY_ID[m].preset})": removal.operator or BY_ID[m].operator for m in metric_ids}


def operator_label(operator: str) -> str:
    return OPERATORS[Operator(operator)].label
