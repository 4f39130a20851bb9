"""Model-randomization sanity checks for one input: does an explanation change when the model is destroyed?

Two checks:
- **Layer randomization** (Adebayo et al. 2018; paper 003 §2.2.3.3, §3.3, code ``layer_randomization.py``):
  re-initialize the classification head, then the transformer blocks from the last to the first, then the
  embeddings (cascading), or one unit alone (independent), re-explain at each stage with the same target
  class, and compare with the original explanation. A faithful method's similarity falls towards 0.
- **Head randomization** (paper 000 §3.3, §5.3, App. E, Table A5): re-initialize only the classifier's last
  layer (Xavier uniform, bias unchanged) under 3 seeds; report the share of words whose attribution changes
  sign and the mean absolute change (both higher = more sensitive = better); in ``head_check.py``.

Similarities (per stage and method, computed on word scores; paper 003 uses sub-word tokens incl. specials):
- ``spearman``: Spearman rank correlation of the signed scores (paper 003's plotted default);
- ``spearman_abs``: Spearman of |scores| (paper 003 computed both, ``*_abs.pkl``);
- ``top_k``: |top-k(|a|) ∩ top-k(|b|)| / k with k = ceil(top_fraction · words);
- ``sign_change``: share of words with sign(a) != sign(b) (paper 000 criterion a; NaN for unsigned methods);
- ``mean_abs_change``: mean |a - b| over words (paper 000 criterion b; raw, method-specific scale).
The random baseline ("chance") is the similarity of each original explanation with random permutations of
itself: what a method that lost all information about the model would score.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import pandas as pd

from evaluation.metric import Metric, register_metric
from evaluation.statistics import spearman
from explainers import Explainer, Explanation, create_from_spec, split_spec
from explainers.cache import DEFAULT_CACHE, ExplanationCache, cache_key, explain_cached
from explainers.params import param
from explainers.shared_passes import cached_any_target
from models import Encoding, ModelError, TextClassifier, WorkStopped, estimate_seconds, metered, randomize
from models.metering import work_units

REFERENCE_LAYERS = "Adebayo et al. 2018; paper 003 section 2.2.2.3 / 3.3 (cascading and independent randomization)"
REFERENCE_HEAD = "paper 000 section 3.3, 5.3, App. E, Table A5 (classifier-head randomization)"
CHANCE = "random ranking (chance)"

METRICS = {m.id: m for m in [
    Metric("sanity_spearman", "Spearman ρ (signed)", "sanity", False, (-1.0, 1.0),
           "Rank correlation of the signed word scores with the original explanation; a faithful method falls "
           "to about 0 as the model is randomized.", REFERENCE_LAYERS),
    Metric("sanity_spearman_abs", "Spearman ρ (absolute)", "sanity", False, (-1.0, 1.0),
           "Rank correlation of |word scores| with the original explanation.", REFERENCE_LAYERS),
    Metric("sanity_top_k", "Top-k overlap", "sanity", False, (0.0, 1.0),
           "Share of the original top-k words (by |score|) still in the top k.", REFERENCE_LAYERS),
    Metric("sanity_sign_change", "Words changing sign", "sanity", True, (0.0, 1.0),
           "Share of words whose attribution changes sign (paper 000 criterion a).", REFERENCE_HEAD),
    Metric("sanity_mean_abs_change", "Mean |change|", "sanity", True, (0.0, None),
           "Mean absolute difference of the word attributions (paper 000 criterion b).", REFERENCE_HEAD),
]}
for _metric in METRICS.values():
    register_metric(_metric)
MEASURES = {"spearman": "sanity_spearman", "spearman_abs": "sanity_spearman_abs", "top_k": "sanity_top_k",
            "sign_change": "sanity_sign_change", "mean_abs_change": "sanity_mean_abs_change"}
SIMILARITY_MEASURES = ("spearman", "spearman_abs", "top_k")  # the curves; 1 = unchanged
DEFAULT_THRESHOLD = 0.5
DEFAULT_TOP_FRACTION = 0.2


@dataclass(frozen=True)
class SanityOptions:
    """Options of a layer-randomization check (the Sanity page draws its controls from this ``param()`` schema)."""

    mode: str = param("cascading", "Mode", "cascading: the head, then each block from the top, then the embeddings, "
                      "keeping earlier stages randomized; independent: one unit at a time, the rest trained (paper "
                      "003)", choices=tuple(randomize.MODES))
    init: str = param("model", "Re-initialization", "model: the model's own initializer (default); normal: N(0, 1) "
                      "for every parameter of the unit, LayerNorm included, as paper 003's code does",
                      choices=tuple(randomize.INITS))
    seed: int = param(0, "Seed", "randomization seed; part of the cache key and of the provenance", min=0)
    measure: str = param("spearman", "Similarity (curve and flag)", "the similarity drawn and used for the verdict",
                         choices=SIMILARITY_MEASURES)
    threshold: float = param(DEFAULT_THRESHOLD, "Fail at ≥", "a method fails when its similarity after "
                             "randomization is at least this (cascading: last stage; independent: mean over the "
                             "stages)", min=-1.0, max=1.0, step=0.05)
    top_fraction: float = param(DEFAULT_TOP_FRACTION, "Top-k share", "k = ceil(share x words) words of the top-k "
                                "overlap", min=0.01, max=1.0, step=0.05)


# ----- similarity between two explanations ------------------------------------------------------------------------
def top_k_count(n: int, top_fraction: float = DEFAULT_TOP_FRACTION) -> int:
    return max(1, min(n, math.ceil(top_fraction * n)))


def top_k_overlap(a, b, k: int) -> float:
    """|top-k(|a|) ∩ top-k(|b|)| / k; ties broken by reading order."""
    a, b = np.abs(np.asarray(a, dtype=np.float64)), np.abs(np.asarray(b, dtype=np.float64))
    if a.size == 0:
        return float("nan")
    top_a = set(np.argsort(-a, kind="stable")[:k].tolist())
    top_b = set(np.argsort(-b, kind="stable")[:k].tolist())
    return len(top_a & top_b) / k


def sign_change_share(a, b) -> float:
    """Paper 000 criterion (a): share of words whose attribution changes sign."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.mean(np.sign(a) != np.sign(b))) if a.size else float("nan")


def mean_abs_change(a, b) -> float:
    """Paper 000 criterion (b): mean absolute difference of the attributions."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.mean(np.abs(a - b))) if a.size else float("nan")


def compare(original, randomized_scores, signed: bool = True, top_fraction: float = DEFAULT_TOP_FRACTION) -> dict:
    """Every measure for one pair of word-score vectors (keys of ``MEASURES``)."""
    a, b = np.asarray(original, dtype=np.float64), np.asarray(randomized_scores, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"explanations cover different words ({a.size} vs {b.size})")
    return {"spearman": spearman(a, b), "spearman_abs": spearman(np.abs(a), np.abs(b)),
            "top_k": top_k_overlap(a, b, top_k_count(a.size, top_fraction)),
            "sign_change": sign_change_share(a, b) if signed else float("nan"),
            "mean_abs_change": mean_abs_change(a, b)}


def _rank_correlations(ranks: np.ndarray, permuted: np.ndarray) -> np.ndarray:
    """Pearson correlation of ``ranks`` with each row of ``permuted`` (= Spearman of the underlying scores)."""
    x = ranks - ranks.mean()
    y = permuted - permuted.mean(axis=1, keepdims=True)
    denominator = np.sqrt((x ** 2).sum() * (y ** 2).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (y @ x) / denominator, np.nan)


def chance_similarity(original, rng: np.random.Generator, draws: int = 100,
                      top_fraction: float = DEFAULT_TOP_FRACTION) -> dict[str, np.ndarray]:
    """Similarity of an explanation with random permutations of itself (the random baseline).

    A permutation of the scores permutes their (average) ranks, so Spearman is the Pearson correlation of the
    rank vector with its permutations: vectorized over the draws.
    """
    from scipy import stats  # lazy: scipy.stats costs ~0.8 s at import
    a = np.asarray(original, dtype=np.float64)
    out = {m: np.full(draws, np.nan) for m in SIMILARITY_MEASURES}
    if a.size < 2 or draws < 1:
        return out
    permutations = np.argsort(rng.random((draws, a.size)), axis=1)
    for measure, values in (("spearman", a), ("spearman_abs", np.abs(a))):
        ranks = stats.rankdata(values)
        out[measure] = _rank_correlations(ranks, ranks[permutations])
    k = top_k_count(a.size, top_fraction)
    out["top_k"] = np.array([top_k_overlap(a, a[p], k) for p in permutations])
    return out


# ----- methods ------------------------------------------------------------------------------------------------------
def explainers_for(specs: list[str]) -> dict[str, Explainer]:
    """'method' or 'method:preset' strings -> explainers (the names are the display keys)."""
    return {spec: create_from_spec(spec) for spec in specs}


def default_methods(registry) -> list[str]:
    """Six cheap methods (gradient, attention, perturbation) plus the random baseline where registered."""
    wanted = ["saliency", "saliency:paper-003", "input_x_gradient", "attention", "attention:paper-003-average",
              "leave_one_out", "random"]
    return [m for m in wanted if split_spec(m)[0] in registry]


# ----- one input --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Fingerprint:
    """Stands in for a classifier in ``cache_key`` (which reads only ``fingerprint``): lets the app ask whether
    a randomized stage is cached without building the randomized model."""

    fingerprint: str


def missing_work(classifier: TextClassifier, encoding: Encoding, methods: dict[str, Explainer], mode: str,
                 init: str, seed: int, target: int,
                 cache: ExplanationCache | None = DEFAULT_CACHE) -> tuple[int, float, float]:
    """(explanations not cached yet, their estimated seconds, their work units) for a whole randomization of one
    input; the units decide whether it runs without a click (``models.metering`` rule (g): never the measured speed,
    so every browser on one link sees the same page)."""
    names = [randomize.ORIGINAL] + [s.name for s in randomize.stages(classifier)]
    missing, seconds, units = 0, 0.0, 0.0
    for name in names:
        fingerprint = classifier.fingerprint if name == randomize.ORIGINAL else \
            randomize.randomized_fingerprint(classifier.fingerprint, mode, name, init, seed)
        for explainer in methods.values():
            stand_in = cast(TextClassifier, _Fingerprint(fingerprint))  # cache_key reads only the fingerprint
            if cache is not None and cache.get(cache_key(stand_in, encoding, explainer, target)):
                continue
            forward, backward = explainer.estimate_passes(encoding)
            missing += 1
            seconds += estimate_seconds(classifier, forward, backward, encoding.n_tokens, method=explainer.id)
            units += work_units(forward, backward, encoding.n_tokens)
    return missing, seconds, units


@dataclass
class StageResult:
    name: str  # "original", "head", "block 5", ..., "embeddings"
    index: int  # 0 = original
    fingerprint: str
    probabilities: np.ndarray
    explanations: dict[str, Explanation] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)


@dataclass
class SanityResult:
    """All stages x methods for one input; ``frame()`` has one row per (stage, method) with every measure."""

    mode: str
    init: str
    seed: int
    target: int
    target_label: str
    labels: list[str]
    methods: list[str]
    signed: dict[str, bool]
    stages: list[StageResult]
    top_fraction: float
    complete: bool
    chance: dict[str, dict[str, float]]  # measure -> mean / low / high
    model_fingerprint: str

    @property
    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stage(self, name: str) -> StageResult:
        return next(s for s in self.stages if s.name == name)

    def frame(self) -> pd.DataFrame:
        original = self.stages[0]
        rows = []
        for stage in self.stages:
            predicted = int(np.argmax(stage.probabilities))
            for method in self.methods:
                if method not in stage.explanations or method not in original.explanations:
                    continue
                values = compare(original.explanations[method].word_scores, stage.explanations[method].word_scores,
                                 self.signed[method], self.top_fraction)
                rows.append({"stage": stage.name, "stage_index": stage.index, "method": method, **values,
                             "predicted": self.labels[predicted], "p_target": float(stage.probabilities[self.target]),
                             "fingerprint": stage.fingerprint})
        return pd.DataFrame(rows, columns=["stage", "stage_index", "method", *MEASURES, "predicted", "p_target",
                                           "fingerprint"])

    def grid(self, method: str) -> tuple[list[str], list[str], np.ndarray]:
        """Degradation grid: rows = stages, columns = words, values = word scores (NaN where not computed)."""
        words = list(self.stages[0].explanations[method].words) if method in self.stages[0].explanations else []
        matrix = np.full((len(self.stages), len(words)), np.nan)
        for row, stage in enumerate(self.stages):
            if method in stage.explanations:
                matrix[row] = stage.explanations[method].word_scores
        return self.stage_names, words, matrix

    def verdicts(self, measure: str = "spearman", threshold: float = DEFAULT_THRESHOLD) -> dict[str, dict]:
        return verdicts(self.frame(), self.mode, measure, threshold, self.chance.get(measure, {}).get("high"))

    def provenance(self) -> dict:
        return {"check": "layer randomization", "mode": self.mode, "init": randomize.INITS[self.init],
                "init_id": self.init, "seed": self.seed, "target": {"index": self.target, "label": self.target_label,
                                                                    "how": "the original model's class, every stage"},
                "stages": self.stage_names, "fingerprints": {s.name: s.fingerprint for s in self.stages},
                "model_fingerprint": self.model_fingerprint, "unit": "words (sum of sub-word scores per method)",
                "top_k": f"ceil({self.top_fraction} x words)", "reference": REFERENCE_LAYERS}


def verdicts(frame: pd.DataFrame, mode: str, measure: str = "spearman", threshold: float = DEFAULT_THRESHOLD,
             chance_high: float | None = None) -> dict[str, dict]:
    """Flag methods whose explanation barely changes when the model is destroyed.

    Cascading: the similarity at the last stage (every unit randomized) is >= threshold -> fails.
    Independent: the mean similarity over the randomized stages is >= threshold -> fails.
    When random rankings themselves reach that value (``chance_high``: the upper end of the random baseline's
    95 % range, wide for short inputs) the verdict is "inconclusive" instead: one short sentence cannot tell.
    ``frame`` has columns stage_index, method and ``measure`` (one value per stage, e.g. a dataset mean).
    """
    out = {}
    for method, group in frame[frame["stage_index"] > 0].groupby("method", sort=False):
        values = group.sort_values("stage_index")[measure].to_numpy(dtype=np.float64)
        if values.size == 0:
            continue
        finite = values[np.isfinite(values)]
        value = float(values[-1]) if mode == "cascading" else float(finite.mean()) if finite.size else float("nan")
        where = "after full randomization" if mode == "cascading" else "mean over the randomized stages"
        if not np.isfinite(value):
            out[method] = {"status": "n/a", "value": value,
                           "reason": f"{measure} undefined {where} (constant scores)"}
        elif value >= threshold and chance_high is not None and np.isfinite(chance_high) and value <= chance_high:
            out[method] = {"status": "inconclusive", "value": value,
                           "reason": f"{measure} = {value:.2f} {where}, but random rankings reach up to "
                                     f"{chance_high:.2f} here: too few words to tell (use the dataset check)"}
        elif value >= threshold:
            out[method] = {"status": "fails", "value": value,
                           "reason": f"{measure} = {value:.2f} >= {threshold} {where}: the explanation barely "
                                     f"depends on the model"}
        else:
            out[method] = {"status": "passes", "value": value,
                           "reason": f"{measure} = {value:.2f} < {threshold} {where}"}
    return out


Progress = Callable[[int, int, str], None]


def explain_into(explainer, classifier, encoding, target, cache, stage: StageResult, name: str,
                 serve_predicted: bool = False) -> None:
    """``serve_predicted``: on the original model the target is its predicted class, so an entry stored for "the
    predicted class" (a page's, a faithfulness run's) is the same explanation and is served too."""
    try:
        hit = cached_any_target(explainer, classifier, encoding, target, cache) \
            if serve_predicted and cache is not None else None
        stage.explanations[name] = hit if hit is not None else explain_cached(explainer, classifier, encoding,
                                                                               target, cache=cache)
    except Exception as error:  # noqa: BLE001  one failing method (e.g. no attention weights) must not stop the rest
        stage.errors[name] = f"{type(error).__name__}: {error}"


def run_sanity(classifier: TextClassifier, encoding: Encoding, methods: dict[str, Explainer] | list[str],
               mode: str = "cascading", init: str = "model", seed: int = 0, target: int | None = None,
               top_fraction: float = DEFAULT_TOP_FRACTION, cache: ExplanationCache | None = DEFAULT_CACHE,
               progress: Progress | None = None, should_stop: Callable[[], bool] | None = None,
               chance_draws: int = 200, only_stages: list[str] | None = None,
               cache_randomized: bool = True) -> SanityResult:
    """Explain ``encoding`` on the original model and at every randomization stage with every method
    (``only_stages``: at those stages only, e.g. the report card's fully randomized model).

    The target class is the original model's (predicted unless given) at every stage. Randomized models come
    from ``models.randomize.family`` (copy-on-write; the shared ``classifier`` is never modified); their
    explanations are cached under their own fingerprints (``cache_randomized=False``: only the original model's
    go through ``cache``, e.g. to share them with a faithfulness run on the same examples).
    """
    if isinstance(methods, list):
        methods = explainers_for(methods)
    if mode not in randomize.MODES:
        raise ModelError(f"Unknown mode '{mode}'. Choose from: {', '.join(randomize.MODES)}.")
    probabilities = classifier.proba_of(encoding)
    if target is None:
        target = int(np.argmax(probabilities))
    all_stages = [s for s in randomize.stages(classifier) if only_stages is None or s.name in only_stages]
    total = (len(all_stages) + 1) * len(methods)
    done = 0
    original = StageResult(randomize.ORIGINAL, 0, classifier.fingerprint, probabilities)
    results = [original]
    complete = True

    def step(stage: StageResult, model: TextClassifier, stage_cache) -> bool:
        nonlocal done
        for name, explainer in methods.items():
            if should_stop is not None and should_stop():
                return False
            if progress is not None:
                progress(done, total, f"{stage.name}: {name}")
            try:  # a Stop ends a long explanation (sMPRT's N samples) at its next batch; finished steps are kept
                with metered(should_stop=should_stop):
                    explain_into(explainer, model, encoding, target, stage_cache, stage, name,
                                 serve_predicted=stage is original)
            except WorkStopped:
                return False
            done += 1
        return True

    if step(original, classifier, cache):
        for stage, model in randomize.family(classifier, mode=mode, init=init, seed=seed):
            if only_stages is not None and stage.name not in only_stages:
                continue
            result = StageResult(stage.name, stage.index + 1, model.fingerprint, model.proba_of(encoding))
            results.append(result)
            if not step(result, model, cache if cache_randomized else None):
                complete = False
                break
    else:
        complete = False
    if progress is not None:
        progress(done, total, "done")
    rng = np.random.default_rng(seed)
    draws: dict[str, list[np.ndarray]] = {m: [] for m in SIMILARITY_MEASURES}
    for explanation in original.explanations.values():
        for measure, values in chance_similarity(explanation.word_scores, rng, chance_draws, top_fraction).items():
            draws[measure].append(values)
    chance = {}
    for measure, parts in draws.items():
        values = np.concatenate(parts) if parts else np.array([])
        values = values[np.isfinite(values)]
        chance[measure] = {"mean": float(values.mean()) if values.size else float("nan"),
                           "low": float(np.quantile(values, 0.025)) if values.size else float("nan"),
                           "high": float(np.quantile(values, 0.975)) if values.size else float("nan")}
    return SanityResult(mode=mode, init=init, seed=seed, target=target, target_label=classifier.labels[target],
                        labels=list(classifier.labels), methods=list(methods),
                        signed={name: e.is_signed() for name, e in methods.items()}, stages=results,
                        top_fraction=top_fraction, complete=complete, chance=chance,
                        model_fingerprint=classifier.fingerprint)
