"""Explain a slice of a dataset: what pushes its predictions, next to the correctly classified examples, and which
words make errors more likely (the shortcut detector).

- ``explain_examples``: one method over many examples, each through the explanation cache (the predicted class is
  explained, so a word with a positive score pushes the prediction toward the class it went to);
- ``class_words``: per predicted class, how often each word is among an example's top-k pushing words;
  ``compare_words`` sets the slice's counts beside the correct examples' counts;
- ``shortcut_words``: for every word present in at least ``min_count`` labelled examples, the error rate with and
  without it, Fisher's exact test (one-sided: presence raises the error rate) and Benjamini-Hochberg over the words
  tested, so a word seen twice with two errors does not top the list by chance.

Words are counted lower-cased, once per example.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from corpora import Example, split_words
from explainers import Explanation, create_from_spec
from explainers.cache import explain_cached
from models import TextClassifier
from models.metering import WorkStopped

TOP_K = 3
MIN_COUNT = 5
ALPHA = 0.05
SHORTCUT_COLUMNS = ["word", "examples", "errors", "error_rate", "error_rate_without", "odds_ratio", "p_value",
                    "q_value", "significant"]
WORD_COLUMNS = ["class", "word", "slice_count", "slice_share", "correct_count", "correct_share"]

Progress = Callable[[int, int], None]


def explain_examples(classifier: TextClassifier, examples: list[Example], method: str,
                     progress: Progress | None = None,
                     should_stop: Callable[[], bool] | None = None) -> list[Explanation]:
    """``method`` ("id" or "id:preset") on each example, explaining its predicted class (cached by content)."""
    explainer = create_from_spec(method)
    explanations = []
    for number, example in enumerate(examples):
        if should_stop is not None and should_stop():
            raise WorkStopped(f"Stopped after {number} of {len(examples)} explanations (they are cached).")
        explanations.append(explain_cached(explainer, classifier, classifier.encode(example.text, example.pair)))
        if progress:
            progress(number + 1, len(examples))
    return explanations


def pushing_words(explanation: Explanation, k: int = TOP_K) -> list[str]:
    """The k highest-scored words; for a signed method only those with a positive score (they push toward the
    explained class)."""
    ranking = list(explanation.ranking())
    if explanation.signed:
        ranking = [i for i in ranking if explanation.word_scores[i] > 0]
    return [explanation.words[i] for i in ranking[:k]]


def class_words(explanations: list[Explanation], k: int = TOP_K) -> dict[int, tuple[Counter, int]]:
    """Per explained (predicted) class: how many examples have each word among their top-k pushing words, and how
    many examples went to that class."""
    out: dict[int, tuple[Counter, int]] = {}
    for explanation in explanations:
        counts, n = out.get(explanation.target, (Counter(), 0))
        counts.update({word.lower() for word in pushing_words(explanation, k)})
        out[explanation.target] = (counts, n + 1)
    return out


def compare_words(in_slice: list[Explanation], correct: list[Explanation], labels: list[str], k: int = TOP_K,
                  top: int = 10) -> pd.DataFrame:
    """Per class: the ``top`` words most often pushing the slice's predictions toward it, with how often they do
    in the correctly classified examples (share = count / examples predicted as that class)."""
    slice_counts, correct_counts = class_words(in_slice, k), class_words(correct, k)
    rows = []
    for target, (counts, n) in sorted(slice_counts.items()):
        reference, n_reference = correct_counts.get(target, (Counter(), 0))
        for word, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:top]:
            rows.append({"class": labels[target], "word": word, "slice_count": count, "slice_share": count / n,
                         "correct_count": reference[word],
                         "correct_share": reference[word] / n_reference if n_reference else float("nan")})
    return pd.DataFrame(rows, columns=WORD_COLUMNS)


def shortcut_words(texts: list[str], errors: list[bool], min_count: int = MIN_COUNT,
                   alpha: float = ALPHA) -> pd.DataFrame:
    """Words whose presence raises the error rate, most significant first.

    ``texts`` and ``errors`` are the labelled examples and whether each was misclassified. Words present in fewer
    than ``min_count`` examples (or in all of them) are not tested; the q-values are Benjamini-Hochberg adjusted
    over the words tested, ``significant`` is q <= ``alpha``.
    """
    from scipy.stats import false_discovery_control, fisher_exact  # lazy: scipy.stats costs ~0.8 s at import
    missed = np.asarray(errors, dtype=bool)
    present = [{word.lower() for word in split_words(text)} for text in texts]
    counts = Counter(word for words in present for word in words)
    tested = sorted(word for word, n in counts.items() if min_count <= n < len(texts))
    n_errors = int(missed.sum())
    rows = []
    for word in tested:
        has = np.fromiter((word in words for words in present), dtype=bool, count=len(texts))
        errors_with = int((has & missed).sum())
        errors_without = n_errors - errors_with
        n_with, n_without = int(has.sum()), len(texts) - int(has.sum())
        odds, p_value = fisher_exact([[errors_with, n_with - errors_with],
                                      [errors_without, n_without - errors_without]], alternative="greater")
        rows.append({"word": word, "examples": n_with, "errors": errors_with, "error_rate": errors_with / n_with,
                     "error_rate_without": errors_without / n_without, "odds_ratio": float(odds),
                     "p_value": float(p_value)})
    frame = pd.DataFrame(rows, columns=SHORTCUT_COLUMNS[:-2])
    frame["q_value"] = false_discovery_control(frame["p_value"], method="bh") if len(frame) else []
    frame["significant"] = frame["q_value"] <= alpha
    return frame.sort_values(["p_value", "errors", "word"], ascending=[True, False, True],
                             ignore_index=True)[SHORTCUT_COLUMNS]


@dataclass
class SliceSummary:
    """A method over a slice and over correctly classified examples: per-example top words and the class words."""

    method: str
    slice_ids: list[str]
    correct_ids: list[str]
    top_words: dict[str, list[str]]  # example id -> its top pushing words (slice and correct examples)
    words: pd.DataFrame  # compare_words
    k: int = TOP_K
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"method": self.method, "k": self.k, "slice": self.slice_ids, "correct": self.correct_ids,
                "top_words": self.top_words, "class_words": self.words.to_dict(orient="records"),
                "notes": self.notes}


def summarize_slice(classifier: TextClassifier, in_slice: list[Example], correct: list[Example], method: str,
                    k: int = TOP_K, progress: Progress | None = None,
                    should_stop: Callable[[], bool] | None = None) -> SliceSummary:
    """Explain the slice and the correct examples with ``method`` (one progress count over both)."""
    total = len(in_slice) + len(correct)

    def shifted(offset: int) -> Progress | None:
        return None if progress is None else (lambda done, _: progress(offset + done, total))

    explained = explain_examples(classifier, in_slice, method, shifted(0), should_stop)
    reference = explain_examples(classifier, correct, method, shifted(len(in_slice)), should_stop)
    notes = []
    if explained and not explained[0].signed:
        notes.append(f"{explained[0].method_label} gives unsigned scores: its top words matter most to the model but "
                     f"need not push toward the predicted class.")
    top_words = {example.id: pushing_words(explanation, k)
                 for example, explanation in zip(in_slice + correct, explained + reference)}
    return SliceSummary(method, [e.id for e in in_slice], [e.id for e in correct], top_words,
                        compare_words(explained, reference, classifier.labels, k), k, notes)
