"""The masked-LM filler of the mlm removal operator (DeletionBERT, ROAD's fill)."""
from __future__ import annotations

from models import ModelError, UserFacingError
from models.mlm import load_filler as load_masked_lm


def load_filler():
    """The prepared masked-LM filler (``models.mlm.load_filler``: its per-process cache is the only one, so
    ``clear_loaded()`` after preparing a new masked LM reaches the metrics too), or a message saying how to get one."""
    try:
        return load_masked_lm()
    except UserFacingError as error:
        raise ModelError(f"The MLM-fill operator (DeletionBERT) needs a prepared masked-LM filler: {error}") from error
