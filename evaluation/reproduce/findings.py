"""A paper's finding as this project reproduces it: the paper's number, how ours is measured, and the rule that turns
our 95 % interval over seeds into a verdict (reproduced / partly / not), with its reason.

A finding's ``work`` computes one number for one seed (the training seed of every model it uses, and the seed of
its sampling), so the interval is over independently trained models, not resamples. The rule is data (``Claim``),
applied when the page is written: a changed rule needs no recomputation.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from evaluation.statistics import t_interval

REPRODUCED, PARTLY, NOT, NOT_RUN = "reproduced", "partly", "not reproduced", "not run"


@dataclass(frozen=True)
class Budget:
    """Sizes of a reproduce run. ``tiny``: the machinery on one-block models trained in seconds (tests);
    ``quick``: all five papers within 3 hours on a 2-core CPU; ``full``: the papers' own sizes (a GPU or Ray)."""

    name: str
    seeds: tuple[int, ...]
    examples: int            # inputs per measurement (paper sizes under ``full``)
    train_limit: int | None  # SST-2 training sentences of each seeded model (None: all)
    blocks: int | None       # MiniLM blocks kept in the seeded default model (None: all six)
    max_length: int = 64
    epochs: float = 1.0
    lr: float = 1e-4
    samples: int = 50        # LIME / KernelSHAP samples
    attack_steps: int = 500
    zoo_blocks: tuple[int | None, ...] = (None, 4, 2)  # paper 003's size axis (None: the six-block default)
    causal: bool = True      # paper 003's architecture axis (the causal twin)
    aml_budget: dict = field(default_factory=dict)  # pAML's recipe overrides (explainers/mask_learning/aml_training.py)


BUDGETS = {
    "tiny": Budget("tiny", seeds=(0, 1, 2), examples=6, train_limit=96, blocks=1, max_length=32, lr=5e-4, samples=16,
                   attack_steps=3, zoo_blocks=(1,), causal=False,
                   aml_budget={"train_size": 24, "validation_size": 8, "epochs": 1}),
    # 2 blocks learn SST-2 in 75 steps at lr 5e-4 (75.8 % held out, seed 0); at 1e-4 they stay at chance
    "quick": Budget("quick", seeds=(0, 1, 2), examples=16, train_limit=2400, blocks=2, lr=5e-4, samples=50,
                    attack_steps=50, zoo_blocks=(2,), causal=True,
                    aml_budget={"train_size": 300, "validation_size": 60, "epochs": 2}),
    "full": Budget("full", seeds=(0, 1, 2, 3, 4), examples=872, train_limit=None, blocks=None, samples=1000,
                   attack_steps=500, zoo_blocks=(None, 4, 2), causal=True),
}


@dataclass(frozen=True)
class Claim:
    """The paper's statement about our number. ``sign``: +1 the paper's number is above 0 (e.g. a difference A - B
    with A larger), -1 below. ``value`` and ``tolerance``: the paper's number itself, matched within the tolerance."""

    sign: int = 0
    value: float | None = None
    tolerance: float = 0.0

    def text(self) -> str:
        if self.value is not None:
            return f"paper {self.value:g} ± {self.tolerance:g}"
        return "paper > 0" if self.sign > 0 else "paper < 0"


@dataclass(frozen=True)
class Finding:
    id: str
    title: str
    paper: str             # the paper's number and where it is (from shared/notes)
    measure: str           # what our number is
    claim: Claim
    work: Callable[[dict], dict]  # spec (seed, budget, store, ...) -> {"value": float, "details": ...} or a skip
    addition: bool = False        # this project's addition, not in the paper
    budgets: tuple[str, ...] = ("tiny", "quick", "full")
    differs: str = ""             # what differs from the paper's set-up (offline models, sizes, data)


def interval(values) -> dict:
    """Mean and Student-t 95 % interval over seeds (few values: t, not the bootstrap)."""
    values = [float(v) for v in values if v is not None and np.isfinite(v)]
    if not values:
        return {"mean": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
    estimate = t_interval(values)
    return {"mean": estimate.mean, "low": estimate.low, "high": estimate.high, "n": len(values)}


def verdict(claim: Claim, estimate: dict) -> tuple[str, str]:
    """(verdict, reason) of our interval over seeds against the paper's claim."""
    mean, low, high, n = estimate["mean"], estimate["low"], estimate["high"], estimate["n"]
    if n == 0 or not np.isfinite(mean):
        return NOT_RUN, "no seed gave a value"
    few = f" (only {n} seed{'s' if n != 1 else ''}: at least 3 are needed for an interval)" if n < 3 else ""
    if claim.value is not None:
        lo, hi = claim.value - claim.tolerance, claim.value + claim.tolerance
        if lo <= mean <= hi and high >= lo and low <= hi and not few:
            return REPRODUCED, (f"our mean {mean:.3g} [{low:.3g}, {high:.3g}] is within the paper's {claim.value:g} "
                                f"± {claim.tolerance:g}")
        if abs(mean - claim.value) <= 3 * max(claim.tolerance, 1e-12):
            return PARTLY, (f"our mean {mean:.3g} [{low:.3g}, {high:.3g}] is near the paper's {claim.value:g} but "
                            f"outside ± {claim.tolerance:g}{few}")
        return NOT, f"our mean {mean:.3g} is far from the paper's {claim.value:g} (± {claim.tolerance:g}){few}"
    side = "above" if claim.sign > 0 else "below"
    if (low > 0 if claim.sign > 0 else high < 0) and not few:
        return REPRODUCED, f"the 95 % interval over seeds lies {side} 0, as in the paper"
    if mean == 0:
        return NOT, f"every seed gave 0: the measurement does not separate the two{few}"
    if mean * claim.sign > 0:
        return PARTLY, f"the mean is {side} 0 as in the paper, but the interval [{low:.3g}, {high:.3g}] holds 0{few}"
    return NOT, f"the mean {mean:.3g} is on the other side of 0 than the paper's{few}"
