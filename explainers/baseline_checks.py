"""Warnings shared by the baseline-relative gradient methods (IG, GradientSHAP, DeepLIFT)."""
from __future__ import annotations

BASELINE_GAP_WARNING = 0.1  # |f(x) - f(b)| below this fraction of |f(x)|


def baseline_gap_warning(f_input: float, gap: float, baseline: str) -> list[str]:
    """A warning when the baseline scores (almost) like the input: there is then (almost) nothing to attribute,
    and the ranking of the near-zero scores says little (a [PAD] baseline can look like the target class to a
    model that never saw [PAD] inside text)."""
    if abs(gap) < BASELINE_GAP_WARNING * abs(f_input):
        return [f"The baseline ({baseline}) scores almost like the input: f(input) = {f_input:+.3g}, "
                f"f(input) - f(baseline) = {gap:+.3g}. There is little to attribute, so the ranking of these scores "
                f"means little; try another baseline."]
    return []
