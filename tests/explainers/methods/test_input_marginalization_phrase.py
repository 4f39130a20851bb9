"""Phrase-level Input Marginalization (paper 000 section 7) against its formula computed by brute force.

A tiny BertForMaskedLM over the tiny word vocabulary (random weights, sharpened) proposes the phrases: the brute
force reads the masked LM's distributions straight from the model, scores every phrase of the vocabulary's words
(|V|^width of them), keeps the k most likely, classifies each counterfactual text with the plain keyword
classifier and applies Eqs. 3-4.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from tiny_models import VOCAB, tiny_masked_lm
from tolerances import log2_odds_tolerance

from explainers.methods.input_marginalization import InputMarginalization
from explainers.methods.input_marginalization_phrase import PhraseInputMarginalization, phrase_windows
from explainers.params import ParamError
from models.granularity import by_units
from models.mlm import Candidate, MaskedLMFiller
from models.mlm.phrases import best_products

TEXT = "the movie was excellent , not dull"


@pytest.fixture(scope="module")
def tiny_mlm() -> MaskedLMFiller:
    return tiny_masked_lm(sharpen=8.0)


def brute_force_phrases(filler: MaskedLMFiller, words: list[str], span: range, k: int) -> list[tuple[tuple, float]]:
    """The k most likely phrases for ``span``: every combination of proposable vocabulary words, scored by the
    product of the masked LM's probabilities at the span's masks (all masked at once), read from the model."""
    tokenizer = filler.tokenizer
    masked = [tokenizer.mask_token if i in span else w for i, w in enumerate(words)]
    encoded = tokenizer(" ".join(masked), return_tensors="pt")
    with torch.no_grad():
        logits = filler.model(**encoded).logits[0]
    positions = (encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[:, 0]
    distributions = torch.softmax(logits[positions].double(), -1).numpy()
    tokens = tokenizer.convert_ids_to_tokens(list(range(len(VOCAB))))
    proposable = [i for i, t in enumerate(tokens) if not t.startswith("##") and i not in tokenizer.all_special_ids]
    scored = [(tuple(tokens[i] for i in combo), math.prod(distributions[t, i] for t, i in enumerate(combo)))
              for combo in itertools.product(proposable, repeat=len(span))]
    return sorted(scored, key=lambda item: -item[1])[:k]


def log2_odds(p: float) -> float:
    return math.log2(p / (1 - p))


def brute_force_score(classifier, filler, words, span, k, target) -> tuple[float, list]:
    phrases = brute_force_phrases(filler, words, span, k)
    texts = [" ".join(words[:span.start] + list(phrase) + words[span.stop:]) for phrase, _ in phrases]
    f = classifier.predict_proba(classifier.tokenize_texts(texts))[:, target]
    f_x = classifier.predict_proba(classifier.tokenize_texts([" ".join(words)]))[0, target]
    weights = np.array([p for _, p in phrases])
    expected = float((weights * f).sum() / weights.sum())  # Eq. 3 over phrases, renormalized
    return log2_odds(f_x) - log2_odds(expected), [f_x, *f]  # Eq. 4


def test_phrase_scores_equal_the_formula_computed_by_brute_force(keyword_classifier, tiny_mlm):
    encoding = keyword_classifier.encode(TEXT)
    words, k, target = list(encoding.words), 5, 1
    explanation = PhraseInputMarginalization(filler=tiny_mlm, width=2, k=k).explain(keyword_classifier, encoding,
                                                                                      target)
    table = explanation.provenance["details"]["phrase_table"]
    spans = phrase_windows(encoding.word_segment, 2)
    assert [row["words"] for row in table] == [[s.start, s.stop] for s in spans]
    expected_phrase = []
    for span, row in zip(spans, table):
        expected, probabilities = brute_force_score(keyword_classifier, tiny_mlm, words, span, k, target)
        assert row["score"] == pytest.approx(expected, abs=log2_odds_tolerance(probabilities))
        best = brute_force_phrases(tiny_mlm, words, span, k)
        assert [c[0] for c in row["candidates"]] == [" ".join(phrase) for phrase, _ in best]
        expected_phrase.append(expected)
    # each word: the mean of the two-word phrases covering it (the first and last word: one phrase)
    covering = [[j for j, s in enumerate(spans) if i in s] for i in range(len(words))]
    expected_words = [np.mean([expected_phrase[j] for j in js]) for js in covering]
    np.testing.assert_allclose(explanation.word_scores, expected_words, atol=1e-4)
    assert explanation.provenance["removal_operator"] == "mlm"


def test_spans_as_players_get_one_score_each(keyword_classifier, tiny_mlm):
    base = keyword_classifier.encode(TEXT)
    units = by_units(base, "span", spans=[(2, 4)], span_unit="word")  # "was excellent" and the rest on each side
    explanation = PhraseInputMarginalization(filler=tiny_mlm, k=4).explain(keyword_classifier, units, 1)
    assert explanation.word_scores.shape == (len(units.groups),)
    for group, score in zip(units.groups, explanation.word_scores):
        expected, probabilities = brute_force_score(keyword_classifier, tiny_mlm, list(base.words), group, 4, 1)
        assert score == pytest.approx(expected, abs=log2_odds_tolerance(probabilities))


def test_width_one_is_word_level_input_marginalization(keyword_classifier, tiny_mlm):
    encoding = keyword_classifier.encode(TEXT)
    phrases = PhraseInputMarginalization(filler=tiny_mlm, width=1, k=6).explain(keyword_classifier, encoding, 1)
    words = InputMarginalization(filler=tiny_mlm, k=6).explain(keyword_classifier, encoding, 1)
    np.testing.assert_allclose(phrases.word_scores, words.word_scores, rtol=0, atol=1e-9)


def test_best_products_equal_the_sorted_cartesian_product():
    rng = np.random.default_rng(0)
    per_position = [[Candidate(f"w{t}{j}", float(p), j) for j, p in enumerate(sorted(rng.random(5), reverse=True))]
                    for t in range(3)]
    everything = sorted(((tuple(c.word for c in combo), math.prod(c.probability for c in combo))
                         for combo in itertools.product(*per_position)), key=lambda item: -item[1])
    best = best_products(per_position, 7)
    assert [(c.words, c.probability) for c in best] == [(w, pytest.approx(p, rel=1e-12)) for w, p in everything[:7]]
    assert best_products([per_position[0], []], 3) == []


def test_windows_stay_inside_a_segment():
    assert phrase_windows([0, 0, 0, 1, 1], 2) == [range(0, 2), range(1, 3), range(3, 5)]
    assert phrase_windows([0, 0, 1], 3) == [range(0, 2), range(2, 3)]  # a short segment is one phrase


def test_a_contrast_is_refused_with_a_message():
    with pytest.raises(ParamError, match="does not take a contrast"):
        PhraseInputMarginalization(contrast="runner-up")
