"""Classifiers: loading, the TextClassifier wrapper, preparing the built-in models, the perturbation engine."""
from models import runtime  # noqa: F401  (sets the process environment before torch is imported)
from models.classifier import CostMeter, TextClassifier, TokenBatch, metered
from models.encoding import Encoding
from models.errors import InputError, ModelError, ModelNotPrepared, UserFacingError
from models.loading import BUILT_IN, cached_classifier, load_classifier
from models.perturb import OPERATORS, Operator, perturb, perturbed_logits, perturbed_proba

__all__ = ["BUILT_IN", "CostMeter", "Encoding", "InputError", "ModelError", "ModelNotPrepared", "OPERATORS",
           "Operator", "TextClassifier", "TokenBatch", "UserFacingError", "cached_classifier", "load_classifier", "metered", "perturb",
           "perturbed_logits", "perturbed_proba"]
