"""One input, several models: each model's prediction and the same methods' explanations, aligned by word.

Paper 003 asks whether a method behaves the same on models of different sizes and architectures. Words are runs of
non-whitespace (``corpora.records``), so every tokenizer's explanation lands on the same word list and rows align
without any token matching. Each model explains its own predicted class (label orders may differ between models;
the class is named on every row). Agreement between two models is the rank correlation of their word scores for the
same method; inputs cut at different lengths by different models are compared on the words both saw.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from evaluation.agreement.measures import Agreement, agreement_matrix
from explainers import Explanation, create_from_spec, label_for
from explainers.cache import DEFAULT_CACHE, ExplanationCache, explain_cached
from models import TextClassifier, UserFacingError
from models.documents import read_input


@dataclass
class ModelRun:
    name: str
    labels: tuple[str, ...]
    probabilities: np.ndarray
    explanations: dict[str, Explanation] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def predicted(self) -> int:
        return int(np.argmax(self.probabilities))

    @property
    def prediction(self) -> str:
        return f"{self.labels[self.predicted]} ({self.probabilities[self.predicted]:.2f})"


@dataclass
class ModelComparison:
    methods: list[str]
    runs: list[ModelRun]

    def agreement(self, method: str, measure: str = "spearman", absolute: bool = True) -> Agreement | None:
        """Rank correlation between the models' explanations of ``method`` (None with fewer than two)."""
        runs = [run for run in self.runs if method in run.explanations]
        if len(runs) < 2:
            return None
        common = min(run.explanations[method].n_words for run in runs)
        explanations = [_first_words(run.explanations[method], common) for run in runs]
        result = agreement_matrix(explanations, measure, absolute)
        names = tuple(run.name for run in runs)
        return replace(result, method_ids=names, labels=names)

    def scores_frame(self) -> pd.DataFrame:
        """Long table (method, model, predicted class, word index, word, score) for export."""
        rows = []
        for run in self.runs:
            for method, explanation in run.explanations.items():
                rows += [{"method": method, "model": run.name, "explained_class": run.labels[run.predicted],
                          "word_index": i, "word": word, "score": float(score)}
                         for i, (word, score) in enumerate(zip(explanation.words, explanation.word_scores))]
        return pd.DataFrame(rows, columns=["method", "model", "explained_class", "word_index", "word", "score"])


def _first_words(explanation: Explanation, n: int) -> Explanation:
    """The explanation of the first ``n`` words only (an input one model cut shorter than another)."""
    if explanation.n_words == n:
        return explanation
    return replace(explanation, words=explanation.words[:n], word_segment=explanation.word_segment[:n],
                   word_scores=np.array(explanation.word_scores[:n]))


def compare_models(classifiers: dict[str, TextClassifier], text: str, pair: str | None, methods: list[str],
                   cache: ExplanationCache | None = DEFAULT_CACHE, progress=None,
                   options: dict | None = None) -> ModelComparison:
    """Explain ``text`` (and ``pair``) with every method on every model (through the explanation cache).
    ``options``: how a long text is read (``models.documents.read_input``; default: whole, in windows)."""
    if not classifiers:
        raise UserFacingError("Choose at least one model.")
    runs, total, done = [], len(classifiers) * len(methods), 0
    for name, classifier in classifiers.items():
        encoding = read_input(classifier, text, pair, options)  # a long text whole, in this model's own windows
        run = ModelRun(name, tuple(classifier.labels), classifier.proba_of(encoding))
        for spec in methods:
            try:
                run.explanations[spec] = explain_cached(create_from_spec(spec), classifier, encoding, run.predicted,
                                                        cache)
            except UserFacingError as error:
                run.errors[spec] = f"{label_for(spec)} on {name}: {error}"
            done += 1
            if progress is not None:
                progress(done, total)
        runs.append(run)
    return ModelComparison(list(methods), runs)
