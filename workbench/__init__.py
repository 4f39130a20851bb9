"""The explanation workbench as a Python library: the app's and the command line's own objects, for notebooks.

    import workbench as wb
    model = wb.load_model("default-quick")
    explanations = wb.explain(model, "a gripping , funny film", methods=["saliency", "lime"])
    explanations.to_frame()                 # one row per (method, word)
    wb.faithfulness(explanations)           # ERASER comprehensiveness / sufficiency with the random band

``__all__`` is the API promise: a name listed here keeps its meaning; a change goes through a release with a
``DeprecationWarning`` first (docs/python.md). Importing this package changes nothing in the process: no
environment variable, no matplotlib backend, no Streamlit import (tests/workbench/test_workbench_import.py); the
library stays offline unless ``EXWB_ALLOW_HUB=1``.
"""
from corpora import Example
from evaluation.faithfulness.presets import BY_ID as _METRICS
from explainers import REGISTRY as _METHODS
from explainers import Explanation
from explainers.export import FORMAT, FormatError, read_document
from models import TextClassifier, UserFacingError
from workbench.data import dataset
from workbench.explaining import explain, load_model
from workbench.explanations import Explanations, load
from workbench.importers import from_ferret, from_inseq, from_token_scores
from workbench.runs import DatasetRun, evaluate
from workbench.scoring import agreement, compare_models, faithfulness, plausibility, sanity, shape

__version__ = "0.34.0"


def methods() -> list[str]:
    """Every explanation method id (``explain(methods=...)``; a preset is ``"method:preset"``)."""
    return sorted(_METHODS)


def metrics() -> list[str]:
    """Every removal metric id (``faithfulness(metrics=...)``)."""
    return sorted(_METRICS)


__all__ = ["DatasetRun", "Example", "Explanation", "Explanations", "FORMAT", "FormatError", "TextClassifier",
           "UserFacingError", "agreement", "compare_models", "dataset", "evaluate", "explain", "faithfulness", "from_ferret",
           "from_inseq", "from_token_scores", "load", "load_model", "methods", "metrics", "plausibility",
           "read_document", "sanity", "shape"]
