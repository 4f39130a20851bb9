"""Explanation methods: the Explanation record, the Explainer base class and registry, one module per method."""
from . import attention, input_x_gradient, integrated_gradients, leave_one_out, saliency  # noqa: F401 (register)
from .aggregate import AGGREGATIONS, NORMALIZATIONS, aggregate_to_words, normalize
from .base import FAMILIES, Attribution, Explainer
from .explanation import Explanation
from .params import ParamError, schema
from .registry import REGISTRY, available, create, explainer_class

__all__ = ["AGGREGATIONS", "Attribution", "Explainer", "Explanation", "FAMILIES", "NORMALIZATIONS", "ParamError",
           "REGISTRY", "aggregate_to_words", "available", "create", "explainer_class", "normalize", "schema"]
