"""Classifiers: loading, the TextClassifier wrapper, preparing the built-in models, the perturbation engine."""
from . import runtime  # noqa: F401  (sets the process environment before torch is imported)
from .classifier import CostMeter, TextClassifier, TokenBatch, metered
from .encoding import Encoding
from .errors import InputError, ModelError, ModelNotPrepared, UserFacingError
from .loading import BUILT_IN, cached_classifier, load_classifier
from .perturb import OPERATORS, Operator, perturb, perturbed_logits, perturbed_proba

__all__ = ["BUILT_IN", "CostMeter", "Encoding", "InputError", "ModelError", "ModelNotPrepared", "OPERATORS",
           "Operator", "TextClassifier", "TokenBatch", "UserFacingError", "cached_classifier", "load_classifier", "metered", "perturb",
           "perturbed_logits", "perturbed_proba"]
