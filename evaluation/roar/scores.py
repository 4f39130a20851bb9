"""ROAR scores: curves with logit-space confidence intervals, paper 001's relative area between curves,
Welch t-tests between measures (paper 000), and the class-leakage check.

- Curves (paper 001 section 5, code): mean over seeds; 95 % CI = expit(mean(logit x) +- t_{0.975,n-1} sem(logit x)).
- Faithfulness (paper 001 Eq. 3): with x the masking ratios, p the measure's and b the random baseline's
  performance, I points:
      sum_i 1/2 dx_i (dp_i + dp_{i+1}) / sum_i 1/2 dx_i (db_i + db_{i+1}),  dp_i = b_i - p_i,  db_i = b_i - b_I.
  Computed per seed (measure seed s against random seed s, with that seed's 0 % / 100 % anchors); the CI maps
  [-1, 1] to [0, 1], takes the logit-space t-interval and maps back (paper 001 code). Higher = more faithful;
  <= 0 = not faithful. Eq. 3 is defined against b_I, random at 100 % masked (the floor): a study without the
  100 % anchor (``anchors=False``, the one-word-per-step count rule) gets no score, because normalizing by
  random at its last ratio instead divides by a drop that can be near 0 (ratios like 5.75 came out, clipped
  to +100 %). With the floor, a per-seed value outside [-1, 1] (a curve below the floor) is clipped for the
  interval as the paper's code does, and the verdict says so with the raw values. Under plain ROAR a score near 0
  is *inconclusive* (redundancy can hide a faithful measure); under Recursive ROAR it means not faithful (paper 001
  section 5.2.1).
- Welch's unequal-variance t-test between two measures' accuracies at each ratio (paper 000 Table 2d).
- Leakage (paper 001 App. A): performance that *rises* as more is masked can only come from the masking
  pattern itself; every rise larger than ``tolerance`` is reported next to the score with a one-sided
  p-value (Welch over seeds, or a two-proportion z-test on the test size with one seed), so a rise within
  the noise of a small test set is not mistaken for leakage.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from evaluation.statistics import t_interval, welch_t_test

METRICS = {"accuracy": "test accuracy", "macro_f1": "test macro-F1"}
EPS = 1e-6
FLOOR_RATIO = 100.0  # b_I of Eq. 3: random at 100 % masked, the shared anchor
NO_FLOOR = ("no score: Eq. 3 is relative to the 100 %-masked floor, which this study does not have (run with the "
            "0 % / 100 % anchors; the curves and the Welch tests still compare the measures)")
COLUMNS = ["kind", "measure", "measure_label", "ratio", "seed", "step", "accuracy", "macro_f1", "n_test", "variant",
           "operator", "target", "importance_model", "masked_train", "masked_test"]


def relative_area(x, p, b) -> float:
    """Paper 001 Eq. 3 for one curve ``p`` against the random curve ``b`` over ratios ``x`` (same length)."""
    x, p, b = (np.asarray(v, dtype=np.float64) for v in (x, p, b))
    if not (x.shape == p.shape == b.shape) or x.size < 2:
        raise ValueError("relative_area needs x, p and b of the same length >= 2")
    dx = np.diff(x)
    dp = b - p
    db = b - b[-1]
    numerator = np.sum(0.5 * dx * (dp[:-1] + dp[1:]))
    denominator = np.sum(0.5 * dx * (db[:-1] + db[1:]))
    return float(numerator / denominator) if denominator != 0 else float("nan")


def logit_interval(values, confidence: float = 0.95) -> dict:
    """Mean and CI of values in (0, 1), computed in logit space and mapped back (paper 001 code)."""
    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    n = values.size
    if n == 0:
        return {"mean": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
    clipped = np.clip(values, EPS, 1 - EPS)
    logits = np.log(clipped / (1 - clipped))
    estimate = t_interval(logits, confidence)
    expit = lambda z: float(1 / (1 + np.exp(-z)))  # noqa: E731
    return {"mean": expit(estimate.mean), "low": expit(estimate.low), "high": expit(estimate.high), "n": int(n)}


def signed_logit_interval(values, confidence: float = 0.95) -> dict:
    """The same for scores in [-1, 1] (mapped to [0, 1] and back), as paper 001's code does for Eq. 3."""
    values = np.asarray(values, dtype=np.float64)
    result = logit_interval((np.clip(values, -1, 1) + 1) / 2, confidence)
    return {k: (2 * v - 1 if k != "n" else v) for k, v in result.items()}


def cells_frame(cells: dict[str, dict]) -> pd.DataFrame:
    """One row per finished cell (failed cells are left out)."""
    rows = []
    for cell in cells.values():
        if "error" in cell or "accuracy" not in cell:
            continue
        share = cell.get("masked_share") or {}
        rows.append({"kind": cell["kind"], "measure": cell["measure"], "measure_label": cell.get("measure_label", ""),
                     "ratio": float(cell["ratio"]), "seed": int(cell["seed"]), "step": int(cell["step"]),
                     "accuracy": float(cell["accuracy"]), "macro_f1": float(cell["macro_f1"]),
                     "n_test": cell.get("n_test"), "variant": cell.get("variant", ""), "operator": cell.get("operator", ""),
                     "target": cell.get("target", ""), "importance_model": cell.get("importance_model", ""),
                     "masked_train": share.get("train"), "masked_test": share.get("test")})
    return pd.DataFrame(rows, columns=COLUMNS)


def _curve_points(frame: pd.DataFrame, mode: str, measure: str) -> pd.DataFrame:
    """The rows of one curve: the measure's cells of this mode, random's ROAR cells, plus the anchors."""
    anchors = frame[frame["kind"] == "anchor"]
    if measure == "random":
        own = frame[(frame["measure"] == "random") & (frame["kind"] == "roar")]
    else:
        own = frame[(frame["measure"] == measure) & (frame["kind"] == mode)]
    return pd.concat([anchors, own], ignore_index=True)


def curve_modes(frame: pd.DataFrame) -> list[str]:
    return [m for m in ("roar", "recursive") if (frame["kind"] == m).any()]


def measures_of(frame: pd.DataFrame) -> list[str]:
    names = [m for m in dict.fromkeys(frame["measure"]) if m not in ("anchor", "random")]
    return names + (["random"] if (frame["measure"] == "random").any() else [])


def curves(frame: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Mean and 95 % logit-space CI per (mode, measure, ratio); anchors appear on every curve."""
    rows = []
    for mode in curve_modes(frame):
        for measure in measures_of(frame):
            points = _curve_points(frame, mode, measure)
            if (points["kind"] != "anchor").sum() == 0:
                continue
            for ratio, group in points.groupby("ratio"):
                interval = logit_interval(group[metric])
                rows.append({"mode": mode, "measure": measure, "ratio": float(ratio), **interval,
                             "values": [float(v) for v in group[metric]]})
    return pd.DataFrame(rows, columns=["mode", "measure", "ratio", "mean", "low", "high", "n", "values"])


def per_seed_scores(frame: pd.DataFrame, mode: str, measure: str, metric: str = "accuracy",
                    max_ratio: float | None = None) -> dict[int, float]:
    """Eq. 3 for each seed that has the measure's and random's points at the same ratios, the 100 % floor among
    them (without it the denominator is not Eq. 3's; see the module docstring). Values are raw (not clipped)."""
    own = _curve_points(frame, mode, measure)
    random = _curve_points(frame, mode, "random")
    out = {}
    for seed in sorted(set(own["seed"]) & set(random["seed"])):
        p = own[own["seed"] == seed].groupby("ratio")[metric].mean()
        b = random[random["seed"] == seed].groupby("ratio")[metric].mean()
        ratios = sorted(set(p.index) & set(b.index))
        if max_ratio is not None:
            ratios = [r for r in ratios if r <= max_ratio]
        elif FLOOR_RATIO not in ratios:
            continue
        if len(ratios) < 2:
            continue
        value = relative_area(np.array(ratios) / 100, p[ratios].to_numpy(), b[ratios].to_numpy())
        if np.isfinite(value):
            out[int(seed)] = value
    return out


def _rise_p_value(before: np.ndarray, after: np.ndarray, n_test: float) -> tuple[float, str]:
    """One-sided p-value that ``after`` is above ``before``: Welch over seeds when there are >= 2 per point,
    else a two-proportion z-test on the test-set size (accuracy of one model each)."""
    from scipy.stats import norm  # lazy: scipy.stats costs ~0.8 s at import
    if before.size >= 2 and after.size >= 2:
        if np.ptp(before) == 0 and np.ptp(after) == 0:
            return (0.0 if after.mean() > before.mean() else 1.0), "Welch t-test over seeds (no spread)"
        return welch_t_test(after, before) / 2, "Welch t-test over seeds, one-sided"
    if not np.isfinite(n_test) or n_test <= 0:
        return float("nan"), "no test"
    pooled = float(np.clip((before.mean() + after.mean()) / 2, 1e-6, 1 - 1e-6))
    z = (after.mean() - before.mean()) / np.sqrt(pooled * (1 - pooled) * 2 / n_test)
    return float(norm.sf(z)), f"two-proportion z-test on {int(n_test)} test examples, one-sided"


def leakage(frame: pd.DataFrame, mode: str, measure: str, metric: str = "accuracy", tolerance: float = 0.01,
            alpha: float = 0.05) -> list[dict]:
    """Rises of the mean curve between consecutive ratios larger than ``tolerance`` (paper 001 App. A), each
    with a one-sided p-value; ``significant`` rises are the ones to warn about, the others may be noise."""
    points = _curve_points(frame, mode, measure)
    if points.empty:
        return []
    grouped = {r: g[metric].to_numpy() for r, g in points.groupby("ratio")}
    n_test = float(points["n_test"].mean()) if "n_test" in points and points["n_test"].notna().any() else np.nan
    ratios = sorted(grouped)
    rises = []
    for a, b in zip(ratios, ratios[1:]):
        rise = float(grouped[b].mean() - grouped[a].mean())
        if rise > tolerance:
            p, test = _rise_p_value(grouped[a], grouped[b], n_test)
            rises.append({"from": a, "to": b, "rise": rise, "p_value": p, "test": test,
                          "significant": bool(np.isfinite(p) and p < alpha)})
    return rises


def verdict(mode: str, low: float, mean: float, n: int) -> str:
    """Paper 001 section 5.2.1: ROAR can show faithfulness but never prove its absence."""
    if not np.isfinite(mean):
        return "no score"
    positive = (low > 0) if n >= 2 else (mean > 0)
    if positive:
        return "faithful (to this degree)" + ("" if n >= 2 else "; 1 seed, no CI")
    return "inconclusive (redundancy may hide it)" if mode == "roar" else "not faithful"


def _clipped_note(values) -> str:
    """Per-seed Eq. 3 values outside [-1, 1] (the curve went below the floor), which the interval clips."""
    outside = [v for v in values if abs(v) > 1]
    if not outside:
        return ""
    return (f"; {len(outside)} of {len(values)} seeds outside [-100 %, +100 %] (raw "
            f"{', '.join(f'{v:+.0%}' for v in outside)}: the curve dips below the 100 % floor), clipped to +-100 % "
            f"for the interval as paper 001's code does")


def summary(frame: pd.DataFrame, metric: str = "accuracy", tolerance: float = 0.01) -> pd.DataFrame:
    """Per (mode, measure): Eq. 3 score with CI, verdict, the 100 % floor and the leakage check. Without the
    100 % anchor there is no score and the verdict says why (``NO_FLOOR``)."""
    rows = []
    anchors = frame[frame["kind"] == "anchor"]
    floor = anchors[anchors["ratio"] == FLOOR_RATIO][metric]
    for mode in curve_modes(frame):
        for measure in measures_of(frame):
            if measure == "random":
                continue
            if not ((frame["measure"] == measure) & (frame["kind"] == mode)).any():
                continue
            seeds = per_seed_scores(frame, mode, measure, metric)
            interval: dict[str, Any] = signed_logit_interval(list(seeds.values())) if seeds else \
                {"mean": float("nan"), "low": float("nan"), "high": float("nan"), "n": 0}
            rises = leakage(frame, mode, measure, metric, tolerance)
            judged = NO_FLOOR if floor.empty else \
                verdict(mode, interval["low"], interval["mean"], interval["n"]) + _clipped_note(list(seeds.values()))
            rows.append({"mode": mode, "measure": measure, "score": interval["mean"], "low": interval["low"],
                         "high": interval["high"], "seeds": interval["n"], "verdict": judged,
                         "leakage": "; ".join(f"+{r['rise']:.1%} from {r['from']:g} % to {r['to']:g} % "
                                              + (f"(significant, p = {r['p_value']:.3f})" if r["significant"]
                                                 else f"(within noise, p = {r['p_value']:.2f})") for r in rises),
                         "leakage_significant": any(r["significant"] for r in rises),
                         "floor_100": float(floor.mean()) if len(floor) else float("nan")})
    return pd.DataFrame(rows, columns=["mode", "measure", "score", "low", "high", "seeds", "verdict", "leakage",
                                       "leakage_significant", "floor_100"])


def welch_table(frame: pd.DataFrame, metric: str = "accuracy") -> pd.DataFrame:
    """Welch t-test p-values between every pair of measures (random included) at each ratio and mode."""
    rows = []
    for mode in curve_modes(frame):
        names = measures_of(frame)
        for ratio in sorted(set(frame.loc[frame["kind"] != "anchor", "ratio"])):
            values = {}
            for name in names:
                points = _curve_points(frame, mode, name)
                group = points[(points["ratio"] == ratio) & (points["kind"] != "anchor")][metric]
                if len(group):
                    values[name] = group.to_numpy()
            for i, a in enumerate(names):
                for b in names[i + 1:]:
                    if a in values and b in values:
                        with warnings.catch_warnings():  # identical values: scipy warns and returns NaN
                            warnings.simplefilter("ignore", RuntimeWarning)
                            p = welch_t_test(values[a], values[b])
                        rows.append({"mode": mode, "ratio": ratio, "measure_a": a, "measure_b": b,
                                     "mean_a": float(values[a].mean()), "mean_b": float(values[b].mean()),
                                     "n_a": len(values[a]), "n_b": len(values[b]), "p_value": p})
    return pd.DataFrame(rows, columns=["mode", "ratio", "measure_a", "measure_b", "mean_a", "mean_b", "n_a", "n_b",
                                       "p_value"])
