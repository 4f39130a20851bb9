"""Explanation methods: the Explanation record, the Explainer base class and registry; one module per method
in ``explainers/methods/`` (importing the package registers every method)."""
from explainers import methods  # noqa: F401  (registers every method)
from explainers.aggregate import AGGREGATIONS, NORMALIZATIONS, aggregate_to_words, normalize
from explainers.base import FAMILIES, Attribution, Explainer
from explainers.explanation import Explanation
from explainers.params import ParamError, schema
from explainers.registry import (
                                 REGISTRY,
                                 available,
                                 create,
                                 create_from_spec,
                                 explainer_class,
                                 format_spec,
                                 is_known_spec,
                                 label_for,
                                 parse_spec,
                                 split_spec,
)

__all__ = ["AGGREGATIONS", "Attribution", "Explainer", "Explanation", "FAMILIES", "NORMALIZATIONS", "ParamError",
           "REGISTRY", "aggregate_to_words", "available", "create", "create_from_spec", "explainer_class",
           "format_spec", "is_known_spec", "label_for", "normalize", "parse_spec", "schema", "split_spec"]
