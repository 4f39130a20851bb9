"""Explaining a slice and the shortcut detector: counts by hand, p-values from scipy, Benjamini-Hochberg
written out, the keyword model's one word."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from scipy.stats import fisher_exact
from tiny_models import KEYWORD, keyword_sentences

from corpora import Example
from evaluation.errors import compare_words, explain_examples, pushing_words, shortcut_words, summarize_slice
from models import metered

LABELS = ("negative", "positive")

# A built corpus: "but" appears in 10 examples, 6 of them errors; "film" in 8 examples with 1 error;
# "twist" in 2 examples, both errors (a rare word: under min_count, never tested); 30 examples, 8 errors.
CORPUS = ([("a film but", True)] * 6 + [("a film but", False)] * 1 + [("plain but", False)] * 3
          + [("a film", False)] * 1 + [("a twist", True)] * 2 + [("a plain one", False)] * 17)


def bh(p_values: list[float]) -> list[float]:
    """Benjamini-Hochberg written out: q_(i) = min over j >= i of p_(j) m / j."""
    order = np.argsort(p_values)
    m = len(p_values)
    ranked = np.array(p_values)[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return list(out)


def test_shortcut_words_against_hand_counts_and_scipy():
    texts, errors = zip(*CORPUS)
    frame = shortcut_words(list(texts), list(errors), min_count=5)
    assert "twist" not in set(frame["word"])  # 2 examples < min_count, however telling
    counts = {"but": (10, 6), "film": (8, 6), "a": (27, 8), "plain": (20, 0), "one": (17, 0)}
    assert set(frame["word"]) == set(counts)
    by_word = frame.set_index("word")
    expected_p = {}
    for word, (n_with, errors_with) in counts.items():
        row = by_word.loc[word]
        assert (row["examples"], row["errors"]) == (n_with, errors_with)
        assert row["error_rate"] == pytest.approx(errors_with / n_with)
        assert row["error_rate_without"] == pytest.approx((8 - errors_with) / (30 - n_with))
        expected_p[word] = fisher_exact([[errors_with, n_with - errors_with],
                                         [8 - errors_with, 30 - n_with - (8 - errors_with)]], alternative="greater")[1]
        assert row["p_value"] == pytest.approx(expected_p[word], rel=1e-12)
    words = list(expected_p)
    for word, q in zip(words, bh([expected_p[w] for w in words])):
        assert by_word.loc[word, "q_value"] == pytest.approx(q, rel=1e-12)
        assert by_word.loc[word, "significant"] == (q <= 0.05)
    assert list(frame["word"][:2]) == ["film", "but"]  # the most significant first
    assert by_word.loc["film", "significant"] and not by_word.loc["plain", "significant"]
    # with a lower min_count the rare word is tested, and the correction over more words raises every q
    wider = shortcut_words(list(texts), list(errors), min_count=2).set_index("word")
    assert "twist" in wider.index and wider.loc["but", "q_value"] >= by_word.loc["but", "q_value"]


def test_no_word_often_enough_gives_an_empty_table():
    frame = shortcut_words(["a b", "c d"], [True, False], min_count=5)
    assert frame.empty and list(frame.columns)[:3] == ["word", "examples", "errors"]


def examples(n: int) -> list[Example]:
    texts, labels = keyword_sentences(n, seed=5)
    return [Example(id=f"kw:{i}", text=t, label=l, label_names=LABELS) for i, (t, l) in enumerate(zip(texts, labels))]


def test_the_keyword_pushes_every_positive_prediction(keyword_classifier):
    data = examples(8)
    explanations = explain_examples(keyword_classifier, data, "leave_one_out")
    positives = [x for x in explanations if x.target == 1]
    assert len(positives) == 4 and all(pushing_words(x, 1) == [KEYWORD] for x in positives)
    # the class table against counts taken straight from the scores
    frame = compare_words(explanations[:4], explanations[4:], list(LABELS), k=2)
    for label, group in frame.groupby("class"):
        target = LABELS.index(label)
        mine = [x for x in explanations[:4] if x.target == target]
        theirs = [x for x in explanations[4:] if x.target == target]

        def count(xs, word):
            return sum(word in [w.lower() for w, s in sorted(zip(x.words, x.word_scores), key=lambda p: -p[1])[:2]
                                if s > 0] for x in xs)

        for row in group.itertuples():
            assert row.slice_count == count(mine, row.word) and row.slice_share == row.slice_count / len(mine)
            assert row.correct_count == count(theirs, row.word)
    assert frame[frame["class"] == "positive"].iloc[0]["word"] == KEYWORD


def test_a_slice_summary_is_served_from_the_cache_the_second_time(keyword_classifier):
    data = examples(6)
    seen = []
    first = summarize_slice(keyword_classifier, data[:3], data[3:], "leave_one_out",
                            progress=lambda d, t: seen.append((d, t)))
    assert seen == [(i, 6) for i in range(1, 7)]
    assert first.slice_ids == [e.id for e in data[:3]] and set(first.top_words) == {e.id for e in data}
    with metered() as meter:
        again = summarize_slice(keyword_classifier, data[:3], data[3:], "leave_one_out")
    assert meter.forward_passes == 0 and again.to_dict() == first.to_dict()
    assert Counter(w for ws in first.top_words.values() for w in ws)[KEYWORD] == 3
