"""Statistics shared by every evaluation: bootstrap and t confidence intervals, Welch's t-test, rank correlation."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Estimate:
    """A mean with a 95 % confidence interval (``low``/``high``) over ``n`` values."""

    mean: float
    low: float
    high: float
    n: int
    ci_method: str

    def to_dict(self) -> dict:
        return {"mean": self.mean, "low": self.low, "high": self.high, "n": self.n, "ci_method": self.ci_method}

    def __str__(self) -> str:
        return f"{self.mean:.4g} [{self.low:.4g}, {self.high:.4g}]"


def bootstrap_ci(values, confidence: float = 0.95, resamples: int = 2000, seed: int = 0) -> Estimate:
    """Percentile bootstrap of the mean (NaNs dropped); a single value has a zero-width interval.

    The values are sorted before the seeded resampling, so the interval is a function of the set of values, not of
    the order they arrive in (found when the same study run locally and on Ray gave different bounds because the
    store returned cells in the order they finished)."""
    values = np.asarray(values, dtype=np.float64)
    values = np.sort(values[np.isfinite(values)])
    if values.size == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0, "bootstrap")
    if values.size == 1 or np.all(values == values[0]):
        return Estimate(float(values.mean()), float(values.mean()), float(values.mean()), int(values.size), "bootstrap")
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    alpha = (1 - confidence) / 2
    return Estimate(float(values.mean()), float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha)),
                    int(values.size), f"percentile bootstrap, {resamples} resamples, seed {seed}")


def t_interval(values, confidence: float = 0.95) -> Estimate:
    """Student-t interval of the mean (for few values, e.g. seeds)."""
    from scipy import stats  # lazy: scipy.stats costs ~0.8 s at import
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    n = values.size
    if n < 2:
        mean = float(values.mean()) if n else float("nan")
        return Estimate(mean, mean, mean, int(n), "t-interval")
    half = stats.t.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n)
    return Estimate(float(values.mean()), float(values.mean() - half), float(values.mean() + half), int(n), "t-interval")


def welch_t_test(a, b) -> float:
    """Two-sided p-value of Welch's unequal-variance t-test (paper 000, Table 2d)."""
    from scipy import stats  # lazy: scipy.stats costs ~0.8 s at import
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 2 or b.size < 2:
        return float("nan")
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def spearman(a, b) -> float:
    """Spearman rank correlation; NaN when either side is constant."""
    from scipy import stats  # lazy: scipy.stats costs ~0.8 s at import
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    return float(stats.spearmanr(a, b).statistic)


def kendall(a, b) -> float:
    from scipy import stats  # lazy: scipy.stats costs ~0.8 s at import
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    return float(stats.kendalltau(a, b).statistic)
