"""The attack refuses a text longer than the model's window, never cutting it silently.

The attack (``attack.py``, paper 003 s. 4) optimizes one embedding perturbation through a double back-propagation
of one forward pass over the whole input. A document read in overlapping windows (``models/windows.py``) has no
such pass: the attack would have to sum its loss over the windows under the document's rule, with a double
backward per window. That is not built; such an input (and one the tokenizer already cut) is refused with this
message, per input: a dataset run records it as a skipped input, the page shows it in place of the attack.
"""
from __future__ import annotations

from models import Encoding
from models.windows import is_document


def long_input_refusal(classifier, encoding: Encoding) -> str | None:
    """Why the attack does not run on ``encoding`` (a text longer than the model's window), else None."""
    if not (is_document(encoding) or encoding.truncated_tokens):
        return None
    tokens = encoding.n_tokens + encoding.truncated_tokens  # a cut encoding: what the tokenizer dropped, too
    return (f"This text has {tokens:,} tokens, more than the {classifier.max_length} the model reads in one pass. "
            f"The attack back-propagates twice through one pass over the whole input; it does not run over a "
            f"document's windows and does not cut the text. Attack a text of at most {classifier.max_length} tokens "
            f"(shorten it), or explain the whole document on the Heatmaps page.")
