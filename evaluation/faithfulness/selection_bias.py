"""The selection-metric rule: a method selected on a metric (AML, paper 004 s. 3.1: its attribution model, and
fAML's per-input map, are the ones that score best on one validation metric) scores optimistically on that very
metric, by construction. Wherever such a method is scored on it, the page and the dataset run say so, and every
exported table carries the badge and the warning as columns (``with_selection_columns``).

The metric a method was selected on is in its explanation (``details["tuned_for"]``, a metric id of
``presets.py``) or, for a method spec of a dataset run, in its ``tuned_for`` parameter (a name or an id of
``explainers/mask_learning/selection.py``).
"""
from __future__ import annotations

import pandas as pd

from evaluation.faithfulness.presets import BY_ID
from explainers import Explanation, ParamError, create_from_spec, label_for
from explainers.mask_learning.selection import metric_named
from models import UserFacingError


def selection_metric_of(method: Explanation | str, params: dict | None = None) -> str | None:
    """The metric id (``presets.BY_ID``) an explanation or a "method[:preset]" spec was selected on, or None for a
    method that was not selected on a metric."""
    if isinstance(method, Explanation):
        details = method.provenance.get("details")
        tuned = details.get("tuned_for") if isinstance(details, dict) else None
    else:
        try:
            tuned = getattr(create_from_spec(method, **(params or {})).params, "tuned_for", None)
        except (ParamError, UserFacingError):
            return None  # a spec that does not parse is reported where it is used
    if not tuned:
        return None
    try:
        return metric_named(tuned).id
    except UserFacingError:
        return None


def selection_warning(method: Explanation | str, metric_ids, params: dict | None = None) -> str | None:
    """One line when ``method`` is scored by the metric it was selected on (its score there is optimistic by
    construction), else None."""
    selected_on = selection_metric_of(method, params)
    if selected_on is None or selected_on not in set(metric_ids):
        return None
    name = method.method_label if isinstance(method, Explanation) else label_for(method)
    metric = BY_ID[selected_on]
    return (f"{name} is tuned for {metric.label}: its {metric.label} score is optimistic by construction (it was "
            f"selected on that metric); compare methods on another one.")


def selection_warnings(methods, metric_ids) -> list[str]:
    """``selection_warning`` of every method (explanations or specs) scored by ``metric_ids``, each once."""
    messages = [selection_warning(method, metric_ids) for method in methods]
    return list(dict.fromkeys(m for m in messages if m))


SELECTION_COLUMNS = ("tuned_for", "selection_warning")


def with_selection_columns(table: pd.DataFrame, sources: dict | None = None, method_column: str = "method",
                           metric_column: str | None = "metric") -> pd.DataFrame:
    """``table`` (one row per method, or per method and metric) with the badge and the warning as columns, so they
    travel with every exported row: ``tuned_for``, the metric a method was selected on ("" for the others), and
    ``selection_warning``, the ``selection_warning`` line where a row scores a method on that very metric.

    A method is looked up in ``sources`` (its explanation, or the spec with its parameters), else read as a
    "method[:preset]" spec; ``metric_column`` None: rows carry no metric, only the badge."""
    out = table.copy()
    if out.empty:
        return out.assign(**{column: pd.Series(dtype=object) for column in SELECTION_COLUMNS})
    sources = sources or {}
    selected = {m: selection_metric_of(sources.get(m, m)) for m in out[method_column].unique()}
    tuned_for = {m: metric_named(metric).label if metric else "" for m, metric in selected.items()}
    out["tuned_for"] = [tuned_for[m] for m in out[method_column]]
    if metric_column is None:
        return out
    warnings = {}
    for method, metric in zip(out[method_column], out[metric_column]):
        if (method, metric) not in warnings:
            line = selection_warning(sources.get(method, method), [metric]) if selected[method] else None
            warnings[method, metric] = line or ""
    out["selection_warning"] = [warnings[pair] for pair in zip(out[method_column], out[metric_column])]
    return out
