"""A method as a page's user chose it, and the work a page run does for it once.

``prepare`` creates each chosen method's explainer, computes its cache key and probes the explanation cache, once
per page run; the cost table (``plan.cost_rows``) and the plan (``plan.make_plan``) both read the result, so a cached
Heatmaps rerun creates, keys and probes each method once (``tests/pages/test_heatmaps_rerun_once.py`` counts it).
"""
from __future__ import annotations

from dataclasses import dataclass

from explainers import cache as cache_module
from explainers.base import Explainer
from explainers.cache import ExplanationCache, Request, cache_key
from explainers.explanation import Explanation
from explainers.registry import create
from models import Encoding, TextClassifier


@dataclass
class MethodChoice:
    """A method as the user chose it on a page: its id, preset and changed parameters."""

    method_id: str
    preset: str | None
    overrides: dict


@dataclass
class Prepared:
    """One chosen method made ready for a page run. ``error`` is set (and the rest may be None) when the method
    could not be created (a parameter out of range) or keyed; the cost table and the plan show it in its row."""

    choice: MethodChoice
    explainer: Explainer | None = None
    key: str | None = None
    hit: Explanation | None = None  # the cache's answer when the run began (None: not cached then)
    error: Exception | None = None


def prepare_one(choice: MethodChoice, classifier: TextClassifier, encoding: Encoding, target: int | None,
                cache: ExplanationCache | None = None) -> Prepared:
    prepared = Prepared(choice)
    try:
        prepared.explainer = create(choice.method_id, preset=choice.preset, **choice.overrides)
        prepared.key = cache_key(classifier, encoding, prepared.explainer, target)
        cache = cache_module.DEFAULT_CACHE if cache is None else cache  # read at each call: benchmarks swap it
        prepared.hit = cache.get(prepared.key, Request.of(classifier, encoding, prepared.explainer, target))
    except Exception as error:  # shown in the method's row, never a traceback
        prepared.error = error
    return prepared


def prepare(choices: list[MethodChoice], classifier: TextClassifier, encoding: Encoding,
            target: int | None) -> dict[str, Prepared]:
    """Every choice prepared, by method id (a page chooses a method once)."""
    return {choice.method_id: prepare_one(choice, classifier, encoding, target) for choice in choices}


def prepared_for(choice: MethodChoice, prepared: dict[str, Prepared] | None, classifier: TextClassifier,
                 encoding: Encoding, target: int | None) -> Prepared:
    """The preparation of ``choice`` from ``prepared`` (one page run's), or a new one where it has none for this
    very choice (another page, a caller without a preparation)."""
    known = None if prepared is None else prepared.get(choice.method_id)
    if known is not None and known.choice == choice:
        return known
    return prepare_one(choice, classifier, encoding, target)

