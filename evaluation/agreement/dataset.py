"""Agreement between methods as a metric group (``agreement``): Pearson, Spearman, Kendall and Krishna et al.'s
disagreement measures in dataset runs, with intervals and the random band.

Agreement is a property of a pair of methods, so the group has its own batch hook: for each example it takes every
method's explanation at once and scores every pair with ``evaluation.agreement.measures.agreement_matrix`` (the same numbers
as the Heatmaps page's panel). It stores two kinds of rows:

- one row per pair, named ``"A vs B"`` (``pair_name``) in the method column, per measure: the pair table. The
  runner's summary gives each pair its mean with a bootstrap 95 % CI and the paired comparison with the random band;
- one row per method: its mean agreement with every other method of the run on that example (mean over partners),
  so the method x metric table shows which method stands apart.

The random band (the runner's ``random baseline`` rows) is the agreement between two independent random attributions
of the same words: standard-normal scores, so a random ranking by |score| (or by signed score) and random signs.
That is the agreement two methods with no information about the input reach by chance; it depends only on the number
of words and on k (for feature agreement about k / n), so one band serves every pair. Scoring each method against
random maps instead would give a band per method, and the pair table needs one per pair; two random maps give that.

Settings (``AgreementOptions``): k of the top-k measures (default 5, capped at the number of words) and the ranking
(by |score|, the default: methods differ in sign conventions; or by signed score). Sign agreement always reads the
raw scores' signs.

Caveat: agreement is not faithfulness (``evaluation.agreement.measures.CAVEAT``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from evaluation.agreement.measures import CAVEAT, DEFAULT_K, MEASURES, agreement_matrix
from evaluation.baselines import orderings_seed, random_explanation
from evaluation.metric import BatchResult, Evaluator, Metric, MetricValues, RunOptions, register_evaluator
from explainers.params import options_from, param

GROUP = "agreement"
PAIR = " vs "  # "A vs B" in the method column of a pair's rows (method specs hold no spaces)
ORDER = ("pearson", "spearman", "kendall", "feature", "rank", "sign", "signed-rank", "pairwise-rank")
RANKINGS = {"magnitude": "rank words by |score| (methods differ in sign conventions)",
            "signed": "rank words by signed score"}
REFERENCE = ("Krishna et al. 2022, The Disagreement Problem in Explainable Machine Learning (arXiv 2202.01602), "
             "section 3 (their measures of disagreement); Pearson / Spearman / Kendall: the correlations "
             "(Krishna et al. use Spearman's rank correlation)")
SECTIONS = {"feature": "feature agreement", "rank": "rank agreement", "sign": "sign agreement",
            "signed-rank": "signed rank agreement", "pairwise-rank": "pairwise rank agreement",
            "spearman": "rank correlation"}


@dataclass(frozen=True)
class AgreementOptions:
    agreement_k: int = param(DEFAULT_K, "Agreement top-k", "k of feature / rank / sign / signed-rank agreement: "
                             "the k most important words of each method (capped at the number of words)", min=1)
    agreement_ranking: str = param("magnitude", "Agreement ranking", "; ".join(f"{k}: {v}" for k, v in
                                                                              RANKINGS.items()),
                                   choices=tuple(RANKINGS))


def metric_id(measure: str) -> str:
    return f"{GROUP}-{measure}"


def pair_name(first: str, second: str) -> str:
    return f"{first}{PAIR}{second}"


def split_pair(name: str) -> tuple[str, str] | None:
    """The two methods of a pair's row, None for a method's own row."""
    first, found, second = str(name).partition(PAIR)
    return (first, second) if found else None


def methods_of_pair(name: str) -> tuple[str, str]:
    """The two methods of a pair's row; ValueError for a method's own row."""
    pair = split_pair(name)
    if pair is None:
        raise ValueError(f"'{name}' is a method's own row, not a pair's (method A{PAIR}method B)")
    return pair


def pair_values(explanations: dict, k: int = DEFAULT_K, absolute: bool = True) -> dict[str, dict[str, float]]:
    """Every pair of methods (in the order given) -> metric id -> value, from ``agreement_matrix``; undefined
    values (a method with constant scores) are left out."""
    names = list(explanations)
    out: dict[str, dict[str, float]] = {pair_name(a, b): {} for i, a in enumerate(names) for b in names[i + 1:]}
    if len(names) < 2:
        return out
    for measure in ORDER:
        matrix = agreement_matrix(list(explanations.values()), measure, absolute, k).matrix
        for i, a in enumerate(names):
            for j in range(i + 1, len(names)):
                if np.isfinite(matrix[i, j]):
                    out[pair_name(a, names[j])][metric_id(measure)] = float(matrix[i, j])
    return out


def partner_means(pairs: dict[str, dict[str, float]], names: list[str]) -> dict[str, dict[str, float]]:
    """Each method's mean agreement with its partners, per metric (over the partners where it is defined)."""
    gathered: dict[str, dict[str, list[float]]] = {name: {} for name in names}
    for pair, values in pairs.items():
        for name in methods_of_pair(pair):
            for metric, value in values.items():
                gathered[name].setdefault(metric, []).append(value)
    return {name: {metric: float(np.mean(v)) for metric, v in per.items()} for name, per in gathered.items()}


def random_values(encoding, n: int, seed: int, k: int = DEFAULT_K, absolute: bool = True) -> dict[str, list[float]]:
    """The random band's draws for one input: ``n`` pairs of independent standard-normal attributions of its words,
    each pair scored with every measure (NaN where a measure is undefined, e.g. correlations of one word)."""
    rng = np.random.default_rng(orderings_seed(seed, f"{GROUP}:{encoding.key}"))
    values: dict[str, list[float]] = {metric_id(m): [] for m in ORDER}
    for draw in range(n):
        pseudo = [random_explanation(encoding, 0, "", rng.standard_normal(encoding.n_words), draw, seed)
                  for _ in range(2)]
        for measure in ORDER:
            values[metric_id(measure)].append(float(agreement_matrix(pseudo, measure, absolute, k).matrix[0, 1]))
    return values


def settings(options: dict) -> tuple[int, bool]:
    """(k, absolute) of a run's options."""
    chosen = options_from(AgreementOptions, options)
    return int(chosen.agreement_k), chosen.agreement_ranking == "magnitude"


def agreement_batch(evaluators, classifier, encoding, example, explanations: dict, options: dict,
                    n_random: int) -> BatchResult:
    """The group's batch hook: the pair rows and each method's mean over partners for one example, and the random
    band's draws. Nothing for a run of one method (there is no pair)."""
    result = BatchResult()
    if len(explanations) < 2:
        result.values[GROUP] = {name: MetricValues() for name in explanations}
        return result
    k, absolute = settings(options)
    pairs = pair_values(explanations, k, absolute)
    means = partner_means(pairs, list(explanations))
    result.values[GROUP] = {**{name: MetricValues(values) for name, values in means.items()},
                            **{pair: MetricValues(values) for pair, values in pairs.items()}}
    if n_random > 0:
        result.random = random_values(encoding, n_random, options_from(RunOptions, options).seed, k, absolute)
    return result


def needs_every_method(classifier, encoding, explanation, example, options) -> MetricValues:
    """Agreement compares methods: one explanation alone has none (the batch hook does the work)."""
    return MetricValues()


def _metric(measure: str) -> Metric:
    label, meaning = MEASURES[measure]
    correlation = measure in ("pearson", "spearman", "kendall")
    where = f"; Krishna et al. section 3, {SECTIONS[measure]}" if measure in SECTIONS else ""
    return Metric(id=metric_id(measure), label=f"Agreement: {label}", family="sanity", higher_is_better=True,
                  range=(-1.0, 1.0) if correlation else (0.0, 1.0),
                  description=f"{meaning}, between two methods on the same input{where}. A method's own row: its "
                              f"mean over the other methods of the run; a pair's row 'A vs B': the two. " + CAVEAT,
                  reference=REFERENCE,
                  params={"data_property": False, "k": DEFAULT_K if measure in ("feature", "rank", "sign",
                                                                               "signed-rank") else None,
                          "ranking": "magnitude (option agreement_ranking)",
                          "random_band": "two independent standard-normal attributions of the same words"})


AGREEMENT = register_evaluator(Evaluator(
    id=GROUP, label="Agreement between methods: Pearson, Spearman, Kendall, Krishna et al.'s top-k and pairwise "
                    "rank agreement", metrics=tuple(_metric(m) for m in ORDER), compute=needs_every_method,
    batch=agreement_batch, options=AgreementOptions))


# ----- reading a run ----------------------------------------------------------------------------------------------
def is_agreement(metric: str) -> bool:
    return str(metric).startswith(f"{GROUP}-")


def pair_table(table: pd.DataFrame) -> pd.DataFrame:
    """The pair rows of a run's summary (``summarize`` / ``run_table``): one row per (measure, pair) with the
    methods apart, the mean and its CI, and the random band with the verdict."""
    if table.empty or "method" not in table:
        return pd.DataFrame()
    rows = table[table["metric"].map(is_agreement) & table["method"].map(lambda m: split_pair(m) is not None)]
    out = rows.copy()
    out.insert(0, "measure", [m.removeprefix(f"{GROUP}-") for m in out["metric"]])
    out.insert(1, "method A", [methods_of_pair(m)[0] for m in out["method"]])
    out.insert(2, "method B", [methods_of_pair(m)[1] for m in out["method"]])
    return out.reset_index(drop=True)


PAIR_COLUMNS = {"method A": "method A", "method B": "method B", "mean": "mean", "low": "CI low", "high": "CI high",
                "n": "examples", "random_mean": "random mean", "random_low": "band low", "random_high": "band high",
                "vs_random": "vs random"}


def pair_rows(pairs: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One measure's pair table with readable column names (the order of ``PAIR_COLUMNS``)."""
    chosen = pairs[pairs["measure"] == measure]
    return chosen[[c for c in PAIR_COLUMNS if c in chosen]].rename(columns=PAIR_COLUMNS).reset_index(drop=True)


def without_pairs(table: pd.DataFrame) -> pd.DataFrame:
    """A run's summary without the pair rows (the method x metric table keeps each method's mean over partners)."""
    if table.empty or "method" not in table:
        return table
    return table[table["method"].map(lambda m: split_pair(m) is None)]


def mean_matrix(pairs: pd.DataFrame, measure: str, methods: list[str]) -> np.ndarray:
    """The methods x methods matrix of a measure's mean pair agreement (1 on the diagonal, NaN where unmeasured)."""
    index = {m: i for i, m in enumerate(methods)}
    matrix = np.full((len(methods), len(methods)), np.nan)
    np.fill_diagonal(matrix, 1.0)
    chosen = pairs[pairs["measure"] == measure]
    for first, second, mean in zip(chosen["method A"], chosen["method B"], chosen["mean"]):
        i, j = index.get(first), index.get(second)
        if i is not None and j is not None:
            matrix[i, j] = matrix[j, i] = mean
    return matrix


def with_settings(table: pd.DataFrame, options: dict) -> pd.DataFrame:
    """The summary with the agreement settings as columns on the agreement rows (k, ranking), for export."""
    if table.empty or not table["metric"].map(is_agreement).any():
        return table
    k, absolute = settings(options)
    out = table.copy()
    mine = out["metric"].map(is_agreement)
    out["agreement_k"] = np.where(mine, k, np.array(None))  # None as numpy's object scalar (what where() makes of it)
    out["agreement_ranking"] = np.where(mine, "magnitude" if absolute else "signed", np.array(None))
    return out
