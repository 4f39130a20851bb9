"""Classifiers: loading, the TextClassifier wrapper, preparing the built-in models, the perturbation engine."""
from models import runtime  # noqa: F401  (sets the process environment before torch is imported)
from models.classifier import TextClassifier, TokenBatch
from models.encoding import Encoding
from models.errors import InputError, ModelError, ModelNotPrepared, UserFacingError
from models.loading import BUILT_IN, cached_classifier, load_classifier
from models.metering import CostMeter, WorkStopped, estimate_seconds, metered
from models.perturb import OPERATORS, Operator, perturb, perturbed_logits, perturbed_proba, resolve_operator

__all__ = ["BUILT_IN", "CostMeter", "Encoding", "InputError", "ModelError", "ModelNotPrepared", "OPERATORS",
           "Operator", "TextClassifier", "TokenBatch", "UserFacingError", "WorkStopped", "cached_classifier",
           "estimate_seconds", "load_classifier", "metered", "perturb", "perturbed_logits", "perturbed_proba",
           "resolve_operator"]
