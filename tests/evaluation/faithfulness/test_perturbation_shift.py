"""Paper 000's Table 4 (accuracy drop per perturbation scheme) and Table A1 (mean |attribution| per word) against
values computed by hand on the keyword model: each perturbed sentence is written out as text and classified from
scratch, never through the perturbation engine."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from roar_fixtures import save_keyword_model

import cli
from corpora import Example
from corpora.records import DataError
from evaluation.faithfulness.perturbation_shift import (
    MAGNITUDE,
    accuracy_drop,
    compute_magnitude,
    mean_abs_attribution,
    perturbation_keeps,
)

POSITIVE = "the movie was excellent"  # label 1: only deleting "excellent" changes the prediction
NEGATIVE = "a dull long plot"  # label 0: no single deletion adds the keyword
EXAMPLES = [Example(id="p", text=POSITIVE, label=1, label_names=("negative", "positive")),
            Example(id="n", text=NEGATIVE, label=0, label_names=("negative", "positive"))]


def predicted(classifier, words) -> int:
    """The class of a word list, encoded from scratch (every word deleted: the empty input)."""
    batch = [classifier.encode(" ".join(words))] if words else classifier.tokenize_texts([""])
    return int(np.argmax(classifier.predict_proba(batch)[0]))


def share_correct(classifier, rows, label) -> float:
    return float(np.mean([predicted(classifier, words) == label for words in rows]))


class FillWith:
    """A stand-in masked LM that writes one fixed word in every removed position."""

    def __init__(self, word):
        self.word = word

    def fill(self, encoding, keep):
        return [[w if k else self.word for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


def test_one_word_deletion_and_replacement_by_hand(keyword_classifier):
    clf = keyword_classifier
    expected = {}
    for name, filler_word in (("loo", None), ("im", "excellent")):
        per_example = []
        for example in EXAMPLES:
            words = example.text.split()
            rows = [[w if j != i else filler_word for j, w in enumerate(words) if j != i or filler_word]
                    for i in range(len(words))]
            per_example.append(float(predicted(clf, words) == example.label) - share_correct(clf, rows, example.label))
        expected[name] = 100 * np.mean(per_example)
    # deleting "excellent" is 1 of 4 copies (a 25-point drop on that input), none on the other: 12.5 points
    assert expected["loo"] == pytest.approx(12.5)
    # writing "excellent" over any word of the negative input flips all 4 copies: (0 + 100) / 2 points
    assert expected["im"] == pytest.approx(50.0)
    table = accuracy_drop(clf, EXAMPLES, ("loo", "im"), filler=FillWith("excellent"), resamples=200).set_index("scheme")
    assert table.loc["loo", "drop_points"] == pytest.approx(expected["loo"])
    assert table.loc["im", "drop_points"] == pytest.approx(expected["im"])
    assert table.loc["loo", "accuracy"] == 1.0 and table.loc["loo", "n_inputs"] == 2
    assert table.loc["loo", "drop_low"] <= table.loc["loo", "drop_points"] <= table.loc["loo", "drop_high"]


def test_lime_samples_delete_one_to_all_words_and_are_scored_by_hand(keyword_classifier):
    rng = np.random.default_rng(0)
    keeps = perturbation_keeps(6, "lime", 400, rng)
    removed = (~keeps).sum(axis=1)
    assert removed.min() == 1 and removed.max() == 6 and abs(removed.mean() - 3.5) < 0.3  # k ~ U{1..6}
    clf = keyword_classifier
    example = EXAMPLES[0]
    encoding = clf.encode(example.text)
    # the same draws as accuracy_drop: a generator from (seed, the input's content key), LIME the only scheme
    draws = perturbation_keeps(4, "lime", 30, np.random.default_rng([7, int(encoding.key[:8], 16)]))
    words = example.text.split()
    rows = [[w for w, k in zip(words, keep) if k] for keep in draws]
    by_hand = 100 * (1.0 - share_correct(clf, rows, 1))
    table = accuracy_drop(clf, [example], ("lime",), lime_samples=30, seed=7, resamples=50)
    assert table["drop_points"].iloc[0] == pytest.approx(by_hand)
    assert 0 < by_hand < 100  # some samples keep the keyword, some do not


def test_unknown_scheme_and_unlabelled_data_get_messages(keyword_classifier):
    with pytest.raises(DataError, match="Unknown perturbation scheme"):
        accuracy_drop(keyword_classifier, EXAMPLES, ("nope",))
    with pytest.raises(DataError, match="gold label"):
        accuracy_drop(keyword_classifier, [Example(id="x", text="excellent", label=None, label_names=())], ("loo",))


def test_mean_abs_attribution_table_a1_by_hand():
    explanations = [SimpleNamespace(word_scores=np.array([2.0, -1.0, 0.0, 1.0])),  # scaled: 1, .5, 0, .5
                    SimpleNamespace(word_scores=np.array([-0.5, 0.25]))]  # scaled: 1, .5
    pooled = np.array([1, 0.5, 0, 0.5, 1, 0.5])
    summary = mean_abs_attribution(explanations)
    assert summary["mean"] == pytest.approx(pooled.mean()) and summary["std"] == pytest.approx(pooled.std())
    assert summary["words"] == 6
    assert compute_magnitude(None, None, explanations[0], None, {})["mean-abs-attribution"] == pytest.approx(0.5)
    assert MAGNITUDE.metrics[0].id == "mean-abs-attribution" and "Table A1" in MAGNITUDE.metrics[0].reference


def test_cli_prints_table_4_and_says_when_the_masked_lm_is_missing(keyword_classifier, isolated_cache, tmp_path,
                                                                   capsys):
    folder = save_keyword_model(keyword_classifier, tmp_path / "model")
    data = tmp_path / "data.csv"
    data.write_text("text,label\n" + "\n".join(f"{e.text},{e.label}" for e in EXAMPLES) + "\n")
    code = cli.main(["evaluate", "--model", str(folder), "--dataset", f"file:{data}", "--perturbation-shift",
                     "--lime-samples", "5", "--json"])
    captured = capsys.readouterr()
    assert code == 0 and "no IM row" in captured.err  # no prepared masked LM in an empty cache
    assert '"scheme": "loo"' in captured.out and '"drop_points": 12.5' in captured.out
