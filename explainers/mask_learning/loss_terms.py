"""The total of a mask-learning loss's terms (MaRC's Eq. 1-2, AML's Eq. 6): Python's ``sum`` of the term tensors,
the same additions in the same order, typed as the tensor it is (``sum`` starts at the integer 0)."""
from __future__ import annotations

from collections.abc import Iterable

import torch


def summed(terms: Iterable[torch.Tensor]) -> torch.Tensor:
    """``sum(terms)``; a ValueError where there is no term (the integer 0 has no gradient to follow)."""
    total = sum(terms)
    if not isinstance(total, torch.Tensor):
        raise ValueError("a loss needs at least one term")
    return total
