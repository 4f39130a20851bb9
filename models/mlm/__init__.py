"""The masked-LM filler (paper 000): replacement words for masked words, and the offline stand-in for BERT.

- ``filler.py``: ``MaskedLMFiller`` (candidates, the MLM-fill operator's filler), ``FixedFill``;
- ``inspector.py``: the candidate inspector (paper 000 figure 1: each word's replacements and its own probability);
- ``recipe.py``: the offline masked LM's recipe and where its prepared copy lives;
- ``loading.py``: ``load_filler(name)`` and the one per-process cache of loaded masked LMs (``clear_loaded``),
  ``with_fill_options`` (a filler under a method's fill mode / exclude-original option);
- ``prepare.py``: building the offline masked LM (``cli.py prepare-mlm``) and its held-out evaluation.

Each imports only the ones above it in this list.
"""
from models.mlm.filler import BUILT_IN_MLM, FILL_MODES, Candidate, FixedFill, MaskedLMFiller
from models.mlm.inspector import HIGH_CONFIDENCE, WordCandidates, inspect_candidates
from models.mlm.loading import MaskedLMNotPrepared, clear_loaded, load_filler, with_fill_options
from models.mlm.prepare import evaluate_filler, evaluation_inputs, prepare_mlm
from models.mlm.recipe import (
                               LONG_RECIPE,
                               PLUS_RECIPE,
                               RECIPE,
                               RECIPES,
                               MLMRecipe,
                               find_prepared_mlm,
                               headline_accuracy,
                               mlm_folder,
                               read_mlm_manifest,
)

__all__ = ["BUILT_IN_MLM", "Candidate", "FILL_MODES", "FixedFill", "HIGH_CONFIDENCE", "LONG_RECIPE", "MLMRecipe",
           "MaskedLMFiller", "MaskedLMNotPrepared", "PLUS_RECIPE", "RECIPE", "RECIPES", "WordCandidates",
           "clear_loaded", "evaluate_filler", "evaluation_inputs", "find_prepared_mlm", "headline_accuracy",
           "inspect_candidates", "load_filler", "mlm_folder", "prepare_mlm", "read_mlm_manifest",
           "with_fill_options"]
