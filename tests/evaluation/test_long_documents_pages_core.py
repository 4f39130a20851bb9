"""What the Error analysis and Compare models pages compute accepts long documents whole."""
import random

import numpy as np
import pytest
from tiny_models import FILLER, KEYWORD

from corpora.records import SENTIMENT_LABELS, Example
from evaluation.errors.predictions import predict_dataset
from evaluation.runs.store import ResultStore
from evaluation.suite.model_comparison import compare_models
from models.windows import DocumentEncoding, encode_document


def long_text() -> str:
    rng = random.Random(5)
    words = [rng.choice(FILLER) for _ in range(150)]
    words[130] = KEYWORD
    return " ".join(words)


def test_error_analysis_predicts_a_document_from_its_windows(keyword_classifier, tmp_path):
    examples = [Example(id="d0", text=long_text(), label=1, label_names=SENTIMENT_LABELS),
                Example(id="s0", text=f"a film {KEYWORD}", label=1, label_names=SENTIMENT_LABELS)]
    table = predict_dataset(keyword_classifier, examples, "test-docs", store=ResultStore(tmp_path / "r.db"))
    document = encode_document(keyword_classifier, long_text())
    assert isinstance(document, DocumentEncoding)
    row = table.frame.set_index("id").loc["d0"]
    expected = keyword_classifier.proba_of(document)  # the mean of the windows' logits, softmaxed
    assert row["confidence"] == pytest.approx(np.max(expected), abs=1e-9)
    assert row["prediction"] == int(np.argmax(expected))


def test_compare_models_explains_every_word_of_a_document(keyword_classifier):
    comparison = compare_models({"tiny": keyword_classifier}, long_text(), None, ["leave_one_out"], cache=None)
    explanation = comparison.runs[0].explanations["leave_one_out"]
    assert len(explanation.words) == 150
    expected = keyword_classifier.proba_of(encode_document(keyword_classifier, long_text()))
    np.testing.assert_allclose(comparison.runs[0].probabilities, expected, atol=1e-9)
