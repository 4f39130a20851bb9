"""Removal curves by sentence: the ERASER AOPC with sentences as the removed units, by hand."""
import pytest
from tiny_models import KEYWORD

from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from models.granularity import by_units

SENTENCES = ["the movie was a film .", "this story had some scenes with actors !", f"the music was {KEYWORD} .",
             "it is very quite a plot ?"]


def prob(classifier, sentences, keep):
    return classifier.predict_text(" ".join(s for i, s in enumerate(sentences) if i in keep))[1]


def test_eraser_aopc_by_sentence_by_hand(keyword_classifier):
    units = by_units(keyword_classifier.encode(" ".join(SENTENCES)), "sentence")
    scores = [0.5, 0.0, 1.0, 0.2]  # ranking 2, 0, 3, 1
    result = evaluate_scores(keyword_classifier, units, [BY_ID["comprehensiveness-eraser"],
                                                         BY_ID["sufficiency-eraser"]], scores,
                             RemovalOptions(operator="delete"))
    everything = set(range(4))
    p = prob(keyword_classifier, SENTENCES, everything)
    # floor(k * 4) for k in 1, 5, 10, 20, 50 %: 0, 0, 0, 0, 2 sentences; AOPC divides by |B| + 1 = 6
    assert result.curves["comprehensiveness-eraser"].counts == [0, 0, 0, 0, 2]
    comp = p - prob(keyword_classifier, SENTENCES, everything - {2, 0})
    suff = p - prob(keyword_classifier, SENTENCES, {2, 0})
    assert result.values["comprehensiveness-eraser"] == pytest.approx(comp / 6, abs=1e-6)
    assert result.values["sufficiency-eraser"] == pytest.approx(suff / 6, abs=1e-6)
