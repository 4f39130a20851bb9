"""What a mask-learning explainer reports while it optimizes, for a live panel (no Streamlit here).

A caller passes ``progress`` (called with a ``MaskProgress`` after every step) and ``should_stop`` (polled
before every step) to the explainer; a stopped run keeps its last mask and says so in a warning.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class MaskProgress:
    step: int  # steps done so far (1-based)
    max_steps: int
    loss: float
    mean_mask: float  # mean word mask value (without noise or random flips)
    mask: np.ndarray  # the current word mask over the explained input's words, in [0, 1]
    terms: dict[str, float] = field(default_factory=dict)  # each loss term
    note: str = ""  # e.g. "segment 2 of 3 converged"


ProgressCallback = Callable[[MaskProgress], None]
StopCheck = Callable[[], bool]
