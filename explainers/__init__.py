"""Explanation methods: the Explanation record, the Explainer base class and registry, one module per method."""
from . import attention, input_x_gradient, integrated_gradients, leave_one_out, saliency  # noqa: F401 (register)
from . import (attention_rollout, deeplift, ensemble, gradient_shap, kernel_shap, lime_explainer,  # noqa: F401
               occlusion, random_baseline, shapley_sampling, smoothgrad)
from . import input_marginalization, leave_one_out_fill, lime_bert  # noqa: F401  (masked-LM methods)
from .aggregate import AGGREGATIONS, NORMALIZATIONS, aggregate_to_words, normalize
from .base import FAMILIES, Attribution, Explainer
from .explanation import Explanation
from .params import ParamError, schema
from .registry import REGISTRY, available, create, explainer_class

__all__ = ["AGGREGATIONS", "Attribution", "Explainer", "Explanation", "FAMILIES", "NORMALIZATIONS", "ParamError",
           "REGISTRY", "aggregate_to_words", "available", "create", "explainer_class", "normalize", "schema"]
