"""Repeatability across seeds: does a stochastic method give the same map when only its seed changes?

LIME, KernelSHAP, Shapley sampling, SmoothGrad, GradientSHAP, MaRC and the random baseline draw samples from a
seed (their ``seed`` parameter). Each method runs K times on the same input, once per seed (default 5), and the
value is the mean over the K (K - 1) / 2 pairs of runs of the Spearman correlation of the word scores
(``sanity_repeatability``) and of the top-k overlap (``sanity_repeatability_top_k``). 1 = the seed does not matter;
a value near the random band means the map is mostly sampling noise (too few samples for this input). A method
without a seed runs K times too: any value below 1 exposes hidden nondeterminism.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.metric import Metric, register_metric
from evaluation.sanity import one_input
from evaluation.statistics import spearman
from explainers import Explainer, Explanation, create
from explainers.cache import DEFAULT_CACHE, ExplanationCache
from models import Encoding, TextClassifier

REFERENCE = "this project's check: repeatability of stochastic methods across seeds (mean pairwise similarity)"
DEFAULT_SEEDS = (0, 1, 2, 3, 4)
METRICS = {m.id: register_metric(m) for m in [
    Metric("sanity_repeatability", "Repeatability: mean pairwise Spearman ρ over seeds", "sanity", True, (-1.0, 1.0),
           "The method run with K seeds on the same input; mean Spearman correlation over the pairs of runs. 1: "
           "the seed does not change the map.", REFERENCE),
    Metric("sanity_repeatability_top_k", "Repeatability: mean pairwise top-k overlap over seeds", "sanity", True,
           (0.0, 1.0), "The method run with K seeds on the same input; mean top-k overlap over the pairs of runs.",
           REFERENCE),
]}
MEASURES = {"spearman": "sanity_repeatability", "top_k": "sanity_repeatability_top_k"}


def has_seed(explainer: Explainer) -> bool:
    return dataclasses.is_dataclass(explainer.params) and "seed" in {f.name for f in
                                                                     dataclasses.fields(explainer.params)}


def with_seed(explainer: Explainer, seed: int) -> Explainer:
    """The same method, preset and parameters with another seed (the explainer itself when it has none)."""
    if not has_seed(explainer):
        return explainer
    return create(explainer.id, preset=explainer.preset, **{**dataclasses.asdict(explainer.params), "seed": int(seed)})


def pairwise(scores: list[np.ndarray], top_fraction: float = one_input.DEFAULT_TOP_FRACTION) -> dict[str, float]:
    """Mean over every pair of score vectors of the Spearman correlation and the top-k overlap (NaN pairs
    left out: a constant map has no ranks)."""
    from scipy import stats  # lazy: scipy.stats costs ~0.8 s at import
    if len(scores) < 2:
        return {"spearman": float("nan"), "top_k": float("nan")}
    k = one_input.top_k_count(len(scores[0]), top_fraction)
    rhos, overlaps = [], []
    for a, b in itertools.combinations(scores, 2):
        if np.array_equal(stats.rankdata(a), stats.rankdata(b)):
            rhos.append(1.0)  # the same ranking (constant maps included) is rho = 1 exactly, not 1 - 1e-16
        else:
            rhos.append(spearman(a, b))
        overlaps.append(one_input.top_k_overlap(a, b, k))
    finite = np.asarray(rhos)
    finite = finite[np.isfinite(finite)]
    return {"spearman": float(finite.mean()) if finite.size else float("nan"), "top_k": float(np.mean(overlaps))}


@dataclass
class RepeatabilityResult:
    seeds: list[int]
    target: int
    methods: list[str]
    seeded: dict[str, bool]  # whether the method has a seed parameter
    explanations: dict[str, list[Explanation]]
    errors: dict[str, str]
    top_fraction: float
    chance: dict[str, dict[str, float]]  # measure -> mean / low / high

    def frame(self) -> pd.DataFrame:
        rows = []
        for method in self.methods:
            runs = self.explanations.get(method, [])
            if len(runs) < len(self.seeds):
                continue
            values = pairwise([e.word_scores for e in runs], self.top_fraction)
            rows.append({"method": method, **values, "seeded": self.seeded[method], "seeds": len(runs)})
        return pd.DataFrame(rows, columns=["method", "spearman", "top_k", "seeded", "seeds"])

    def provenance(self) -> dict:
        return {"check": "repeatability across seeds", "seeds": self.seeds, "target": self.target,
                "unit": "words", "top_k": f"ceil({self.top_fraction} x words)", "reference": REFERENCE,
                "value": "mean over the pairs of seeds"}


def run_repeatability(classifier: TextClassifier, encoding: Encoding, methods: dict[str, Explainer] | list[str],
                      seeds=DEFAULT_SEEDS, target: int | None = None,
                      top_fraction: float = one_input.DEFAULT_TOP_FRACTION,
                      cache: ExplanationCache | None = DEFAULT_CACHE, progress=None, should_stop=None,
                      chance_draws: int = 200, chance_seed: int = 0) -> RepeatabilityResult:
    """Every method once per seed on ``encoding``; the random band is each first run against random permutations
    of itself (``one_input.chance_similarity``)."""
    if isinstance(methods, list):
        methods = one_input.explainers_for(methods)
    seeds = [int(s) for s in seeds]
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError("Repeatability needs at least two different seeds.")
    if target is None:
        target = int(np.argmax(classifier.proba_of(encoding)))
    explanations: dict[str, list[Explanation]] = {}
    errors: dict[str, str] = {}
    total, done = len(methods) * len(seeds), 0
    for name, explainer in methods.items():
        holder = one_input.StageResult("repeat", 0, classifier.fingerprint, np.zeros(0))
        for seed in seeds:
            if should_stop is not None and should_stop():
                break
            if progress is not None:
                progress(done, total, f"{name}: seed {seed}")
            one_input.explain_into(with_seed(explainer, seed), classifier, encoding, target, cache, holder, str(seed))
            done += 1
        explanations[name] = [holder.explanations[str(s)] for s in seeds if str(s) in holder.explanations]
        errors.update({f"{name} / seed {k}": v for k, v in holder.errors.items()})
    if progress is not None:
        progress(done, total, "done")
    rng = np.random.default_rng(chance_seed)
    chance = {}
    for measure in ("spearman", "top_k"):
        draws = [one_input.chance_similarity(runs[0].word_scores, rng, chance_draws, top_fraction)[measure]
                 for runs in explanations.values() if runs]
        values = np.concatenate(draws) if draws else np.array([])
        values = values[np.isfinite(values)]
        chance[measure] = {"mean": float(values.mean()) if values.size else float("nan"),
                           "low": float(np.quantile(values, 0.025)) if values.size else float("nan"),
                           "high": float(np.quantile(values, 0.975)) if values.size else float("nan")}
    return RepeatabilityResult(seeds=seeds, target=target, methods=list(methods),
                               seeded={name: has_seed(e) for name, e in methods.items()}, explanations=explanations,
                               errors=errors, top_fraction=top_fraction, chance=chance)
