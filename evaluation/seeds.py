"""Seed lists as people type them ("0, 1, 2"), for the command line and the pages alike."""
from __future__ import annotations

import re

from explainers.params import ParamError


def parse_seeds(text: str, name: str = "seeds", count: bool = False, most: int | None = None) -> list[int]:
    """'0, 1, 2' (commas, semicolons or spaces) -> [0, 1, 2], in the order given.

    ``count``: a single number n means n seeds, 0 .. n-1 (``cli.py roar --seeds 3``). Seeds must be distinct
    whole numbers >= 0, at most ``most`` of them; otherwise a ParamError that starts with ``name``.
    """
    parts = [p for p in re.split(r"[,;\s]+", str(text).strip()) if p]
    try:
        seeds = [int(p) for p in parts]
    except ValueError:
        shape = " or a count (3 = seeds 0, 1, 2)" if count else ""
        raise ParamError(f"{name} must be whole numbers separated by commas, e.g. 0, 1, 2{shape}; got {text!r}.") \
            from None
    if count and len(seeds) == 1:
        seeds = list(range(seeds[0]))
    if not seeds or min(seeds) < 0 or len(set(seeds)) != len(seeds):
        raise ParamError(f"{name} needs at least one seed, all distinct and >= 0; got {text!r}.")
    if most is not None and len(seeds) > most:
        raise ParamError(f"{name}: give at most {most} seeds; got {len(seeds)}.")
    return seeds
