"""Scores of one input's explanations as DataFrames, each with its random band: faithfulness (removal metrics),
plausibility (against a human rationale), sanity (model randomization) and agreement between methods.

Every function calls the evaluation code the app's pages call; nothing is computed here. The explanations may come
from ``workbench.explain``, ``workbench.load`` or an importer (ferret, inseq): they must explain the text as the
model splits it into words (a word is a run of non-whitespace, ``corpora.records``).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from corpora import normalize_typed_text
from evaluation.agreement.measures import MEASURES, agreement_matrix, shape_table
from evaluation.baselines import DEFAULT_ORDERINGS
from evaluation.faithfulness.one_input import evaluate_input
from evaluation.plausibility.metrics import PlausibilityConfig
from evaluation.plausibility.one_input import score_example
from evaluation.sanity.one_input import run_sanity
from evaluation.suite.model_comparison import compare_models as _compare_models
from explainers import format_spec
from models import Encoding, TextClassifier, UserFacingError
from workbench.explaining import load_model
from workbench.explanations import Explanations

# ERASER's comprehensiveness and sufficiency (DeYoung et al. 2020, paper 004 s. 4) and paper 003's Def. 2.1 / 2.2
DEFAULT_METRICS = ("comprehensiveness-eraser", "sufficiency-eraser")


def _model_and_input(explanations: Explanations, model: TextClassifier | str | None) -> tuple[TextClassifier,
                                                                                              Encoding]:
    classifier = load_model(model) if isinstance(model, str) else model or explanations.classifier
    if classifier is None:
        raise UserFacingError("These explanations were loaded from a file: pass the model they explain, e.g. "
                              "faithfulness(explanations, model='default').")
    if explanations.encoding is not None and classifier is explanations.classifier:
        return classifier, explanations.encoding
    if explanations.text is None:
        raise UserFacingError("The explanations carry no input text (context['text']); explain or import them with "
                              "their text.")
    encoding = classifier.encode(explanations.text, explanations.pair)
    for e in explanations:
        if tuple(e.words) != tuple(encoding.words):
            raise UserFacingError(f"The explanation by {e.method_id} has {len(e.words)} words and the model reads "
                                  f"{len(encoding.words)} in this input: give scores for the model's words "
                                  f"(model.encode(text).words).")
    return classifier, encoding


def faithfulness(explanations: Explanations, metrics: Sequence[str] = DEFAULT_METRICS,
                 model: TextClassifier | str | None = None, options: dict | None = None,
                 n_random: int = DEFAULT_ORDERINGS) -> pd.DataFrame:
    """Removal metrics for each explanation, plus ``n_random`` random orderings (their mean and band): one row per
    (metric, method) and one "random" row per metric; ``vs_random`` flags a value inside the band.

    ``metrics``: ids of ``evaluation.faithfulness.presets.BY_ID`` (``workbench.metrics()``), e.g. the ERASER
    AOPC presets (DeYoung et al. 2020), paper 003's Def. 2.1 / 2.2 (``comprehensiveness-003``), ferret's
    (``comprehensiveness-ferret``). ``options``: removal options (operator, target, ...) as on the page.
    """
    classifier, encoding = _model_and_input(explanations, model)
    by_method = {_name(e): e for e in explanations}
    report = evaluate_input(classifier, encoding, by_method, list(metrics), options, n_random=n_random)
    return report.table()


def agreement(explanations: Explanations, measure: str = "spearman", absolute: bool = True) -> pd.DataFrame:
    """Methods x methods agreement of the word scores (``measure``: one of ``evaluation.agreement.measures.MEASURES``;
    Krishna et al., arXiv 2202.01602). Rank agreement of |scores| by default, as on the page."""
    if len(explanations) < 2:
        raise UserFacingError("Agreement compares methods: explain with at least two.")
    if measure not in MEASURES:
        raise UserFacingError(f"Unknown agreement measure '{measure}'; choose one of {', '.join(MEASURES)}.")
    matrix = agreement_matrix(list(explanations), measure, absolute)
    names = [_name(e) for e in explanations]
    return pd.DataFrame(matrix.matrix, index=names, columns=names)


def shape(explanations: Explanations) -> pd.DataFrame:
    """Complexity, Gini and top-k share of each explanation (Bhatt et al. 2020, Chalasani et al. 2020)."""
    return pd.DataFrame(shape_table(list(explanations)))


def plausibility(explanations: Explanations, rationale: Sequence[int], model: TextClassifier | str | None = None,
                 config: PlausibilityConfig | None = None) -> pd.DataFrame:
    """Each explanation against a human rationale (a 0/1 mask over the words of the text, then the pair): one row
    per method with every plausibility metric (ERASER's token F1 / IOU, AUPRC; paper 002's top-p on datasets), and
    the random band: rows "random" (the mean), "random_low" and "random_high" (2.5 and 97.5 percentiles) over 100
    shuffles of the first explanation's scores (seed 0)."""
    classifier, encoding = _model_and_input(explanations, model)
    config = config or PlausibilityConfig()
    rows = []
    for e in explanations:
        rows.append({"method": _name(e), **score_example(encoding, e.word_scores, list(rationale), config).metrics})
    rng = np.random.default_rng(0)
    shuffled = [score_example(encoding, rng.permutation(explanations[0].word_scores), list(rationale), config).metrics
                for _ in range(100)]
    draws = pd.DataFrame(shuffled)
    rows.append({"method": "random", **draws.mean().to_dict()})
    rows.append({"method": "random_low", **draws.quantile(0.025).to_dict()})
    rows.append({"method": "random_high", **draws.quantile(0.975).to_dict()})
    return pd.DataFrame(rows)


def sanity(explanations: Explanations, mode: str = "cascading", model: TextClassifier | str | None = None,
           seed: int = 0) -> pd.DataFrame:
    """The model randomization test (Adebayo et al. 2018): each method on copies of the model with layers
    re-initialized (``mode`` cascading from the head, or independent), similarity to the original explanation per
    stage, with the chance band (``chance_*``: the similarity of random re-orderings of the same scores)."""
    classifier, encoding = _model_and_input(explanations, model)
    methods = list(dict.fromkeys(_name(e) for e in explanations))
    target = explanations[0].target
    result = run_sanity(classifier, encoding, methods, mode=mode, seed=seed, target=target)
    frame = result.frame()
    for measure, band in result.chance.items():
        for key in ("mean", "low", "high"):
            if key in band:
                frame[f"chance_{measure}_{key}"] = band[key]
    return frame


def _name(e) -> str:
    return format_spec(e.method_id, e.provenance.get("preset"))


def compare_models(models: dict[str, TextClassifier | str] | Sequence[str], text: str, pair: str | None = None,
                   methods: Sequence[str] = ("integrated_gradients",), measure: str = "spearman"
                   ) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """One input on several models (the Model comparison page, paper 003's cross-model agreement): the long table
    (method, model, explained class, word, score) and, per method, models x models agreement of the word scores."""
    named = {m: m for m in models} if not isinstance(models, dict) else dict(models)
    classifiers = {name: load_model(m) if isinstance(m, str) else m for name, m in named.items()}
    comparison = _compare_models(classifiers, normalize_typed_text(text),
                                 normalize_typed_text(pair) if pair is not None else None, list(methods))
    matrices = {}
    for method in methods:
        agreement_of = comparison.agreement(method, measure)
        if agreement_of is not None:
            matrices[method] = pd.DataFrame(agreement_of.matrix, index=agreement_of.labels,
                                            columns=agreement_of.labels)
    return comparison.scores_frame(), matrices
