"""The Counterfactuals page's HTML drawn without Streamlit: the candidate inspector's word cards (paper 000 Fig. 1; a
word the masked LM predicts as itself flagged) and a minimal flip as a diff. Every word is escaped."""
from __future__ import annotations

import re

from evaluation.errors import Flip
from models.mlm import Candidate, WordCandidates
from ui.figures.candidate_cards import FLAG, candidate_cards_html, word_card_html
from ui.figures.flip_diff import flip_diff_html


def _word(word: str, top: str, probability: float, rank: int | None) -> WordCandidates:
    candidates = (Candidate(top, probability, 1), Candidate("<script>", 0.01, 2))
    return WordCandidates(0, word, 0, candidates, probability if rank == 1 else 0.0, rank)


def test_a_word_predicted_as_itself_is_flagged_and_every_candidate_escaped():
    predictable = _word("the", "the", 0.93, 1)
    surprising = _word("<em>good</em>", "bad", 0.4, None)
    assert f"2px solid {FLAG}" in word_card_html(predictable, 0.5) and "&#9888;" in word_card_html(predictable, 0.5)
    assert FLAG not in word_card_html(predictable, 0.95)  # below the threshold: not flagged
    page = candidate_cards_html([predictable, surprising], 0.5)
    assert "<script>" not in page and "<em>" not in page and "&lt;em&gt;good&lt;/em&gt;" in page
    assert re.findall(r'color:#777">([0-9.]+)<', page) == ["0.9300", "0.0100", "0.4000", "0.0100"]
    assert page.count("&#9888;") == 1


def test_a_flip_reads_as_a_diff_of_the_input():
    flip = Flip(words=("a", "<b>dull</b>", "&", "slow", "film"), segments=(0,) * 5,
                changes=((1, "<i>fine</i>"), (3, None)), original_class=0, original_probability=0.9, new_class=1,
                new_probability=0.3, found=True, evaluated=12, mode="replace")
    page = flip_diff_html(flip)
    body = re.sub(r" style=\"[^\"]*\"", "", page.split(">", 1)[1].rsplit("</div>", 1)[0])
    assert body == ("a <del>&lt;b&gt;dull&lt;/b&gt;</del> <ins>&lt;i&gt;fine&lt;/i&gt;</ins> &amp; <del>slow</del> "
                    "film")
