"""One input on several models: aligned words, each model's own prediction, agreement between models
checked against scipy's Spearman, and an input one model cuts shorter than the other."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from smooth_models import smooth_classifier
from tiny_models import tiny_tokenizer

from evaluation.suite.model_comparison import compare_models
from models import TextClassifier

TEXT = "a good film with a bad end and a fine cast"


def test_two_models_explained_side_by_side_with_their_agreement(keyword_classifier):
    smooth = smooth_classifier()
    comparison = compare_models({"keyword": keyword_classifier, "smooth": smooth}, TEXT, None,
                                ["saliency", "leave_one_out"], cache=None)
    keyword_run, smooth_run = comparison.runs
    assert keyword_run.explanations["saliency"].words == smooth_run.explanations["saliency"].words == tuple(
        TEXT.split())
    assert keyword_run.predicted == int(np.argmax(keyword_classifier.predict_text(TEXT)))
    assert keyword_run.explanations["saliency"].target == keyword_run.predicted
    agreement = comparison.agreement("saliency", absolute=True)
    assert agreement.labels == ("keyword", "smooth")
    expected = stats.spearmanr(np.abs(keyword_run.explanations["saliency"].word_scores),
                               np.abs(smooth_run.explanations["saliency"].word_scores)).statistic
    assert agreement.matrix[0, 1] == pytest.approx(expected, abs=1e-9)
    frame = comparison.scores_frame()
    assert len(frame) == 2 * 2 * len(TEXT.split()) and set(frame["model"]) == {"keyword", "smooth"}


def test_a_model_that_cuts_the_input_is_compared_on_the_words_both_saw(keyword_classifier):
    short = TextClassifier(smooth_classifier().model, tiny_tokenizer(), name="short", device="cpu")
    short.max_length = 8  # a model with a shorter limit: it sees the first 6 word tokens
    whole = compare_models({"full": keyword_classifier, "short": short}, TEXT, None, ["saliency"], cache=None)
    assert {run.explanations["saliency"].n_words for run in whole.runs} == {len(TEXT.split())}  # windows
    comparison = compare_models({"full": keyword_classifier, "short": short}, TEXT, None, ["saliency"], cache=None,
                                options={"long_documents": "truncate"})
    full_run, short_run = comparison.runs
    n = short_run.explanations["saliency"].n_words
    assert n < full_run.explanations["saliency"].n_words
    agreement = comparison.agreement("saliency")
    expected = stats.spearmanr(np.abs(full_run.explanations["saliency"].word_scores[:n]),
                               np.abs(short_run.explanations["saliency"].word_scores)).statistic
    assert agreement.matrix[0, 1] == pytest.approx(expected, abs=1e-9)


def test_one_model_has_no_agreement_and_errors_are_kept_per_method(keyword_classifier):
    comparison = compare_models({"keyword": keyword_classifier}, TEXT, None, ["saliency"], cache=None)
    assert comparison.agreement("saliency") is None and comparison.runs[0].errors == {}
