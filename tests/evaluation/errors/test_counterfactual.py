"""Minimal-flip counterfactual search: the keyword model flips when its one keyword goes, and only then."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from tiny_models import KEYWORD

from evaluation.errors import minimal_flip, mlm_candidates
from models import UserFacingError, metered

POSITIVE = f"the movie had some {KEYWORD} scenes with music"
NEGATIVE = "the movie had some long scenes with music"


def reclassified(classifier, flip) -> int:
    """The class of the counterfactual text, classified afresh (not through the search's own batch)."""
    text, pair = flip.texts()
    return int(np.argmax(classifier.predict_text(text, pair)))


def test_removing_the_keyword_is_a_one_word_flip(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    flip = minimal_flip(keyword_classifier, encoding)
    assert flip.found and flip.size == 1 and flip.original_class == 1 and flip.new_class == 0
    assert flip.changes == ((POSITIVE.split().index(KEYWORD), None),)
    assert flip.texts()[0] == POSITIVE.replace(f" {KEYWORD}", "") and reclassified(keyword_classifier, flip) == 0
    assert flip.evaluated == encoding.n_words  # the leave-one-out round found it
    assert [status for status, _, _ in flip.diff()].count("removed") == 1
    assert ("removed", KEYWORD, None) in flip.diff()


def test_no_removal_flips_a_sentence_without_the_keyword(keyword_classifier):
    encoding = keyword_classifier.encode(NEGATIVE)
    with metered() as meter:
        flip = minimal_flip(keyword_classifier, encoding, budget=60)
    assert not flip.found and flip.new_class == flip.original_class == 0
    assert flip.evaluated <= 60 and meter.forward_passes == flip.evaluated + 1  # + the original prediction
    assert reclassified(keyword_classifier, flip) == 0


def test_replacing_the_keyword_with_a_candidate(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    candidates = [["boring", "the"] for _ in range(encoding.n_words)]
    flip = minimal_flip(keyword_classifier, encoding, mode="replace", candidates=candidates)
    index = POSITIVE.split().index(KEYWORD)
    assert flip.found and flip.size == 1 and flip.changes[0][0] == index
    assert flip.diff()[index][0] == "replaced" and flip.diff()[index][2] in ("boring", "the")
    assert reclassified(keyword_classifier, flip) == 0
    assert flip.to_dict()["counterfactual"] == flip.texts()[0]


def test_a_budget_below_one_round_stops_before_any_work(keyword_classifier):
    flip = minimal_flip(keyword_classifier, keyword_classifier.encode(POSITIVE), budget=3)
    assert not flip.found and flip.evaluated == 0 and flip.size == 0


def test_bad_requests_get_a_message(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    with pytest.raises(UserFacingError, match="masked LM"):
        minimal_flip(keyword_classifier, encoding, mode="replace")
    with pytest.raises(UserFacingError, match="Unknown counterfactual mode"):
        minimal_flip(keyword_classifier, encoding, mode="swap")


@pytest.mark.integration
def test_masked_lm_replacements_on_the_quick_model(quick_classifier):
    from models.mlm import load_filler

    filler = load_filler("mlm")
    encoding = quick_classifier.encode("a gorgeous , witty , seductive movie .")
    candidates = mlm_candidates(filler, encoding, k=3)
    assert len(candidates) == encoding.n_words
    assert all(word.lower() not in [c.lower() for c in row] for word, row in zip(encoding.words, candidates))
    flip = minimal_flip(quick_classifier, encoding, mode="replace", candidates=candidates, budget=200)
    assert flip.evaluated <= 200
    if flip.found:
        assert reclassified(quick_classifier, flip) == flip.new_class != flip.original_class


# ----- exact where affordable, "greedy" said where not ---------------------------------------------------------
NOT_GREEDY = "had awful fun fun music had the and"  # smooth tiny model (seed 3): greedy removes 3 words, 2 suffice


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier(seed=3)


def brute_force_minimum(classifier, words: list[str]) -> tuple[int, list[tuple[int, ...]]]:
    """The fewest words whose removal flips the prediction, and every removed set of that size that flips it: each
    subset's text written out and classified afresh, sizes 1, 2, ... in turn."""
    original = int(np.argmax(classifier.predict_text(" ".join(words))))
    for size in range(1, len(words)):
        flips = [removed for removed in itertools.combinations(range(len(words)), size)
                 if int(np.argmax(classifier.predict_text(" ".join(w for i, w in enumerate(words)
                                                                      if i not in removed)))) != original]
        if flips:
            return size, flips
    return len(words), []


def test_the_exact_search_finds_the_minimum_greedy_misses(smooth):
    words = NOT_GREEDY.split()
    encoding = smooth.encode(NOT_GREEDY)
    size, flips = brute_force_minimum(smooth, words)
    greedy = minimal_flip(smooth, encoding, exact=False)
    assert greedy.found and greedy.search == "greedy" and greedy.size > size  # the case of the issue
    flip = minimal_flip(smooth, encoding)
    assert flip.found and flip.search == "exact" and flip.size == size == 2
    assert tuple(sorted(i for i, _ in flip.changes)) in flips and reclassified(smooth, flip) != flip.original_class
    assert flip.to_dict()["search"] == "exact"
    # every removal of 2 words was classified on top of the greedy's work, at most: C(8, 2) = 28
    assert greedy.evaluated < flip.evaluated <= greedy.evaluated + math.comb(len(words), 2)


def test_without_the_budget_to_prove_it_the_greedy_flip_is_returned_and_marked_greedy(smooth):
    encoding = smooth.encode(NOT_GREEDY)
    greedy = minimal_flip(smooth, encoding, exact=False)
    short = minimal_flip(smooth, encoding, budget=greedy.evaluated + 5)  # the 28 pairs do not fit
    assert short.search == "greedy" and short.changes == greedy.changes and short.evaluated == greedy.evaluated


def test_an_exhaustive_search_with_no_flip_says_so(keyword_classifier):
    encoding = keyword_classifier.encode("the movie had long scenes")  # no keyword: removing words never flips
    flip = minimal_flip(keyword_classifier, encoding, budget=100)  # 2^5 - 2 removals in all
    assert not flip.found and flip.search == "exact"
    assert brute_force_minimum(keyword_classifier, encoding.words)[1] == []


def test_a_one_word_flip_is_exact_at_no_extra_cost(keyword_classifier):
    encoding = keyword_classifier.encode(POSITIVE)
    flip = minimal_flip(keyword_classifier, encoding)
    assert flip.search == "exact" and flip.size == 1 and flip.evaluated == encoding.n_words
