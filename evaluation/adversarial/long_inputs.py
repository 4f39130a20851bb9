"""Which long inputs the attack refuses, never cutting a text silently.

A document longer than the model's window is attacked over its windows (``documents.py``). Refused, with a
message per input (a dataset run records it as a skipped input, the page shows it in place of the attack):
- a text the tokenizer already cut (read it whole instead: ``models.documents.read_input`` reads it in windows);
- a document read in more than ``MAX_ATTACK_WINDOWS`` windows, unless the caller opts in (``allow_long``): the
  message states the cost model's estimate first, as for the other methods on very long texts.
"""
from __future__ import annotations

from evaluation.adversarial.config import AttackConfig
from evaluation.adversarial.documents import MAX_ATTACK_WINDOWS, attack_seconds
from models import Encoding
from models.windows import DocumentEncoding


def long_input_refusal(classifier, encoding: Encoding, method: str = "input_x_gradient",
                       config: AttackConfig | None = None, allow_long: bool = False) -> str | None:
    """Why the attack does not run on ``encoding``, else None."""
    if encoding.truncated_tokens:
        tokens = encoding.n_tokens + encoding.truncated_tokens  # what the tokenizer dropped, too
        return (f"This text has {tokens:,} tokens, more than the {classifier.max_length} the model reads in one pass, "
                f"and it was cut. The attack does not run on a cut text: read it whole (in overlapping windows; "
                f"the default reading on the pages and in dataset runs) and the attack runs over its windows, or "
                f"shorten it.")
    if isinstance(encoding, DocumentEncoding) and len(encoding.windows) > MAX_ATTACK_WINDOWS and not allow_long:
        seconds = attack_seconds(classifier, encoding, method, config or AttackConfig())
        return (f"This document is read in {len(encoding.windows)} windows of {encoding.window_size} tokens "
                f"({encoding.n_words:,} words): the attack back-propagates twice through every window at every step, "
                f"about {seconds / 60:,.0f} min for the full step budget (an early stop ends sooner). Documents over "
                f"{MAX_ATTACK_WINDOWS} windows need an explicit opt-in (--allow-long on the command line, the "
                f"checkbox on the page); Stop keeps the best iterate so far. Or attack a shorter part of it.")
    return None
