"""A named evaluator variant: one option pinned to a value, its metric ids marked with a suffix.

Soft sufficiency / comprehensiveness (``soft-20-masks``: ``soft_samples`` = 20) and NAOPC (``naopc-exact-10``:
``naopc_exact_words`` = 10) register such variants beside their default evaluator, so an old default stays
available under a name while the default follows the source.
"""
from __future__ import annotations

from dataclasses import dataclass

from evaluation.metric import MetricValues
from explainers.params import with_values


@dataclass(frozen=True)
class PinnedPreset:
    """``value`` None: the evaluator reads the user's ``option``; otherwise the preset pins it."""

    id: str
    label: str
    option: str
    value: object | None
    suffix: str = ""

    def options(self, options: dict) -> dict:
        """The run's options with the pinned value (made once per run's frozen options, so parsed once)."""
        return options if self.value is None else with_values(options, **{self.option: self.value})

    def metric_id(self, base: str) -> str:
        return f"{base}[{self.suffix}]" if self.suffix else base

    def rename(self, values: MetricValues) -> MetricValues:
        if not self.suffix:
            return values
        return MetricValues({self.metric_id(k): v for k, v in values.items()},
                            details={self.metric_id(k): v for k, v in values.details.items()})
