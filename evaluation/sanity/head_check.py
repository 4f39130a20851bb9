"""Paper 000's head randomization for one input (section 3.3, 5.3, App. E, Table A5): re-initialize only the
classifier's last layer (Xavier uniform, bias unchanged) under 3 seeds and compare each explanation with the original:
the share of words whose attribution changes sign and the mean absolute change (both higher = more sensitive)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.sanity.one_input import (
    MEASURES,
    REFERENCE_HEAD,
    Progress,
    StageResult,
    compare,
    explain_into,
    explainers_for,
)
from explainers import Explainer, Explanation
from explainers.cache import DEFAULT_CACHE, ExplanationCache
from models import Encoding, TextClassifier, randomize

PAPER_000_SEEDS = (0, 1, 2)


@dataclass
class HeadCheckResult:
    seeds: list[int]
    target: int
    target_label: str
    labels: list[str]
    methods: list[str]
    signed: dict[str, bool]
    original: dict[str, Explanation]
    randomized: dict[int, dict[str, Explanation]]
    probabilities: dict[int, np.ndarray]  # seed -> probabilities of the randomized model (-1: original)
    fingerprints: dict[int, str]
    errors: dict[str, str]
    layer: str

    def frame(self) -> pd.DataFrame:
        rows = []
        for seed in self.seeds:
            for method in self.methods:
                if method not in self.original or method not in self.randomized.get(seed, {}):
                    continue
                values = compare(self.original[method].word_scores, self.randomized[seed][method].word_scores,
                                 self.signed[method])
                rows.append({"seed": seed, "method": method, **values,
                             "predicted": self.labels[int(np.argmax(self.probabilities[seed]))],
                             "p_target": float(self.probabilities[seed][self.target])})
        return pd.DataFrame(rows, columns=["seed", "method", *MEASURES, "predicted", "p_target"])

    def summary(self) -> pd.DataFrame:
        """Paper 000 Table A5 layout: per method, mean ± std over seeds of the sign-change share and mean |change|."""
        frame = self.frame()
        rows = []
        for method, group in frame.groupby("method", sort=False):
            rows.append({"method": method,
                         "sign_change_mean": group["sign_change"].mean(), "sign_change_std": group["sign_change"].std(),
                         "mean_abs_change_mean": group["mean_abs_change"].mean(),
                         "mean_abs_change_std": group["mean_abs_change"].std(),
                         "spearman_mean": group["spearman"].mean(), "seeds": len(group)})
        return pd.DataFrame(rows)

    def provenance(self) -> dict:
        return {"check": "classifier-head randomization", "layer": self.layer,
                "init": randomize.HEAD_INITS["xavier"], "seeds": self.seeds,
                "target": {"index": self.target, "label": self.target_label, "how": "the original model's class"},
                "fingerprints": self.fingerprints, "reference": REFERENCE_HEAD}


def run_head_check(classifier: TextClassifier, encoding: Encoding, methods: dict[str, Explainer] | list[str],
                   seeds=PAPER_000_SEEDS, target: int | None = None,
                   cache: ExplanationCache | None = DEFAULT_CACHE,
                   progress: Progress | None = None, should_stop: Callable[[], bool] | None = None) -> HeadCheckResult:
    """Paper 000's check: the original explanation vs. the explanation after each head randomization."""
    if isinstance(methods, list):
        methods = explainers_for(methods)
    seeds = [int(s) for s in seeds]
    probabilities = {-1: classifier.proba_of(encoding)}
    if target is None:
        target = int(np.argmax(probabilities[-1]))
    errors: dict[str, str] = {}
    original = StageResult(randomize.ORIGINAL, 0, classifier.fingerprint, probabilities[-1])
    total, done = (len(seeds) + 1) * len(methods), 0
    randomized_explanations, fingerprints = {}, {-1: classifier.fingerprint}
    for seed in [None, *seeds]:
        model = classifier if seed is None else randomize.cached_head(classifier, seed)
        holder = original if seed is None else StageResult(f"head seed {seed}", 1, model.fingerprint,
                                                          model.proba_of(encoding))
        if seed is not None:
            probabilities[seed] = holder.probabilities
            fingerprints[seed] = model.fingerprint
        for name, explainer in methods.items():
            if should_stop is not None and should_stop():
                break
            if progress is not None:
                progress(done, total, f"{holder.name}: {name}")
            explain_into(explainer, model, encoding, target, cache, holder, name)
            done += 1
        errors.update({f"{holder.name} / {k}": v for k, v in holder.errors.items()})
        if seed is not None:
            randomized_explanations[seed] = holder.explanations
    return HeadCheckResult(seeds=seeds, target=target, target_label=classifier.labels[target],
                           labels=list(classifier.labels), methods=list(methods),
                           signed={name: e.is_signed() for name, e in methods.items()},
                           original=original.explanations, randomized=randomized_explanations,
                           probabilities=probabilities, fingerprints=fingerprints, errors=errors,
                           layer=randomize.head_output_layer(classifier)[0])
