"""Coarse to fine's sentence rules: orders and limits against values worked out by hand, and a second
round whose leave-one-out scores equal word-level leave-one-out's."""
import numpy as np
import pytest
from tiny_models import KEYWORD

from explainers import create
from explainers.coarse_rules import RULES, SentenceRule, choose, ranked, second_round, word_budget
from explainers.coarse_to_fine import coarse_to_fine
from models import InputError

GROUPS = [range(0, 20), range(20, 22), range(22, 30), range(30, 100)]  # 20, 2, 8 and 70 words
SCORES = np.array([1.0, 0.4, 0.8, 1.4])


def test_orders_by_score_density_and_square_root():
    assert ranked(SentenceRule("score"), SCORES, GROUPS) == [3, 0, 2, 1]
    # per word: 0.05, 0.2, 0.1, 0.02
    assert ranked(SentenceRule("density"), SCORES, GROUPS) == [1, 2, 0, 3]
    # / sqrt(words): 0.224, 0.283, 0.283, 0.167 (ties keep the sentence order)
    assert ranked(SentenceRule("sqrt"), SCORES, GROUPS) == [1, 2, 0, 3]


def test_a_share_budget_counts_the_coarse_pass_and_goes_past_a_sentence_that_does_not_fit():
    rule = SentenceRule("score", top_k=None, budget_share=0.3)
    # 0.3 x 100 words - 4 sentences - 1 = 25 players: sentence 3 (71) does not fit, 0 (21) does, 2 (9) no longer
    # fits (30), 1 (3) does: 24
    assert word_budget(rule, 100, 4) == pytest.approx(25)
    assert choose(rule, SCORES, GROUPS, 100) == [0, 1]
    assert choose(SentenceRule("score", top_k=2), SCORES, GROUPS, 100) == [3, 0]  # no budget: the top two
    assert choose(SentenceRule("score", top_k=None, budget_share=0.01), SCORES, GROUPS, 100) == [3]  # at least one


def test_a_second_round_adds_the_sentences_whose_score_reaches_the_tenth_word():
    rule = SentenceRule("density", top_k=1, budget_share=1.0, second_round=True)
    chosen = choose(rule, SCORES, GROUPS, 100)
    assert chosen == [1]
    fine = np.array([0.5, 0.3])  # two words refined: the 10th best is the 2nd (0.3)
    # every score >= 0.3; budget 100 - 4 - 1 = 95 players: 3 + 9 + 21 spent, sentence 3's 71 would pass it
    assert second_round(rule, SCORES, GROUPS, 100, chosen, fine) == [2, 0]
    fine = np.array([1.3, 1.2])
    assert second_round(rule, SCORES, GROUPS, 100, chosen, fine) == [3]  # only 1.4 reaches 1.2; 3 + 71 fits
    assert second_round(SentenceRule("density", top_k=1), SCORES, GROUPS, 100, chosen, fine) == []


def test_bad_rules_get_a_message():
    with pytest.raises(InputError, match="choose one of"):
        SentenceRule("length")
    with pytest.raises(InputError, match="budget_share"):
        SentenceRule(budget_share=0.0)
    with pytest.raises(InputError, match="coarse-to-fine rule"):
        coarse_to_fine(create("leave_one_out"), None, None, rule="nonsense")


SENTENCES = ["the movie was a film .", "this story had some scenes with actors !", f"the music was {KEYWORD} .",
             "it is very quite a plot ?", "the film had music .", f"actors and {KEYWORD} scenes ."]


@pytest.mark.parametrize("rule", list(RULES))
def test_every_rule_gives_word_level_leave_one_out_on_the_words_it_refines(keyword_classifier, rule):
    """Leave-one-out's fine pass removes one word with the rest kept: word-level leave-one-out's own row."""
    encoding = keyword_classifier.encode(" ".join(SENTENCES))
    method = create("leave_one_out", operator="pad")
    result = coarse_to_fine(method, keyword_classifier, encoding, target=1, rule=rule)
    word_level = method.explain(keyword_classifier, encoding, target=1).word_scores
    assert result.explained.any() and result.rule == rule
    np.testing.assert_allclose(result.word_scores[result.explained], word_level[result.explained], atol=1e-6)
    assert (result.word_scores[~result.explained] == 0).all()


def test_a_row_budget_counts_a_word_in_an_overlap_twice():
    rows = np.ones(100)
    rows[20:30] = 2  # sentences 1 and 2 lie in two windows' overlap
    rule = SentenceRule("density", top_k=None, budget_share=0.2)
    # 0.2 x 110 rows - coarse (1 + 2 + 2 + 1) - 1 = 15 rows: sentence 1 costs 2 x 2 + 1 = 5, sentence 2 2 x 8 + 1 = 17
    assert word_budget(rule, 100, 4, GROUPS, rows) == pytest.approx(15)
    assert choose(rule, SCORES, GROUPS, 100, rows) == [1]
    assert choose(rule, SCORES, GROUPS, 100) == [1, 2]  # counted in words: 20 - 4 - 1 = 15 >= 3 + 9


def test_rows_per_word_are_the_windows_holding_each_word(keyword_classifier):
    from explainers.coarse_rules import rows_per_word
    from models.windows import encode_document
    document = encode_document(keyword_classifier, " ".join(["film"] * 150))
    expected = np.zeros(150)
    for window in document.windows:
        expected[list(window.words)] += 1
    np.testing.assert_array_equal(rows_per_word(document), expected)
    assert (rows_per_word(keyword_classifier.encode("a short film")) == 1).all()
