"""Which sentences coarse to fine refines: the rules, as named presets.

A rule orders the sentences by their coarse score (the removal method with sentences as players) and takes them in
that order until a limit:

- order ``score``: the sentence's score (the first rule, preset ``top3-score``); ``density``: score per word (a
  short sentence holding one strong word ranks above a long one with the same score); ``sqrt``: score / sqrt(words)
  (length-normalised, between the two).
- limits: ``top_k`` sentences; ``budget_words`` words; ``budget_share``: the whole run within this share of the
  word-level method's window rows (a removal re-runs the windows that hold the removed words, so a word in a
  windows' overlap costs two rows; the coarse pass's rows count against the budget: fine rows + one block per
  chosen sentence <= share x word-level rows - coarse rows). With a budget the rule goes on down the order past a
  sentence that does not fit (adaptive k). At least one sentence is always refined.
- ``second_round``: after the first fine pass, the sentences not refined yet whose coarse score reaches the
  ``TOP_WORDS``-th best word score found so far are refined too, in order, within what is left of the budget (the
  removal of a whole sentence that moves the prediction less than that word alone is unlikely to hold a top word).

Measured on ``eraser-movies-docs:test`` with leave-one-out (``bench/bench_coarse_to_fine.py``, docs/benchmarks.md).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from models import InputError
from models.windows import is_document

TOP_WORDS = 10  # the agreement's top-k (target: top-10 precision >= 0.8)
ORDERS = ("score", "density", "sqrt")


@dataclass(frozen=True)
class SentenceRule:
    order: str = "score"
    top_k: int | None = 3
    budget_words: int | None = None
    budget_share: float | None = None
    second_round: bool = False

    def __post_init__(self):
        if self.order not in ORDERS:
            raise InputError(f"Unknown sentence order '{self.order}'; choose one of {', '.join(ORDERS)}.")
        if self.top_k is not None and self.top_k < 1:
            raise InputError("Choose at least one sentence (top_k >= 1), or no limit.")
        if self.budget_share is not None and not 0 < self.budget_share <= 1:
            raise InputError(f"budget_share {self.budget_share} must be in (0, 1].")

    def limited(self, top_k: int | None, budget_words: int | None) -> SentenceRule:
        """This rule's order with explicit limits instead of its own (no share, no second round)."""
        return replace(self, top_k=top_k, budget_words=budget_words, budget_share=None, second_round=False)


RULES = {
    "top3-score": SentenceRule("score", top_k=3),
    "top3-density": SentenceRule("density", top_k=3),
    "top3-sqrt": SentenceRule("sqrt", top_k=3),
    "budget15-score": SentenceRule("score", top_k=None, budget_share=0.15),
    "budget15-density": SentenceRule("density", top_k=None, budget_share=0.15),
    "budget15-sqrt": SentenceRule("sqrt", top_k=None, budget_share=0.15),
    # a second round needs room: within 15 % the first round leaves none (docs/benchmarks.md), so 25 % here
    "top3-score+round2": SentenceRule("score", top_k=3, budget_share=0.25, second_round=True),
    "top3-density+round2": SentenceRule("density", top_k=3, budget_share=0.25, second_round=True),
    "top3-sqrt+round2": SentenceRule("sqrt", top_k=3, budget_share=0.25, second_round=True),
}
# the best measured (docs/benchmarks.md, 6 eraser-movies-docs:test documents): the only rules within the 15 % time
# target, and score order the simplest of the best there; the first rule stays as the preset "top3-score"
DEFAULT_RULE = "budget15-score"


def rule_of(rule: str | SentenceRule) -> SentenceRule:
    if isinstance(rule, SentenceRule):
        return rule
    if rule not in RULES:
        raise InputError(f"Unknown coarse-to-fine rule '{rule}'; choose one of {', '.join(RULES)}.")
    return RULES[rule]


def ranked(rule: SentenceRule, scores: np.ndarray, groups) -> list[int]:
    sizes = np.array([max(1, len(g)) for g in groups], dtype=np.float64)
    key = {"score": scores, "density": scores / sizes, "sqrt": scores / np.sqrt(sizes)}[rule.order]
    return [int(i) for i in np.argsort(-key, kind="stable")]


def rows_per_word(encoding) -> np.ndarray:
    """Window rows a removal of each word runs: the windows that hold it (1 for an input read in one pass)."""
    if not is_document(encoding):
        return np.ones(encoding.n_words)
    document = getattr(encoding, "base", encoding)
    out = np.zeros(document.n_words)
    for window in document.windows:
        out[window.words.start:window.words.stop] += 1
    return out


def _cost(group: range, word_rows: np.ndarray | None) -> float:
    """A sentence's fine rows: its words' and one block's."""
    return (len(group) if word_rows is None else float(word_rows[group.start:group.stop].sum())) + 1


def word_budget(rule: SentenceRule, n_words: int, n_sentences: int, groups=None,
                word_rows: np.ndarray | None = None) -> float:
    """Fine rows (a word's windows, a block counted as one) the rule may spend in all; inf without a budget. With
    ``word_rows`` the share is of word-level rows and the coarse pass's rows (each sentence's windows) count."""
    budgets = [np.inf]
    if rule.budget_words is not None:
        budgets.append(rule.budget_words)
    if rule.budget_share is not None:
        if word_rows is None or groups is None:
            budgets.append(rule.budget_share * n_words - n_sentences - 1)
        else:
            coarse = sum(max(word_rows[g.start:g.stop], default=1) for g in groups)  # windows per sentence, about
            budgets.append(rule.budget_share * float(word_rows.sum()) - coarse - 1)
    return min(budgets)


def extend(rule: SentenceRule, order: list[int], groups, chosen: list[int], budget: float,
           count_limit: int | None, word_rows: np.ndarray | None = None) -> list[int]:
    """``chosen`` plus sentences of ``order`` (skipping those chosen), each costing its rows and a block, until
    ``count_limit`` more or the budget; past a sentence that does not fit only under a budget."""
    out = list(chosen)
    spent = sum(_cost(groups[i], word_rows) for i in out)
    added = 0
    for index in order:
        if index in out:
            continue
        if count_limit is not None and added >= count_limit:
            break
        cost = _cost(groups[index], word_rows)
        if spent + cost > budget:
            if rule.budget_share is not None:
                continue  # adaptive k: a shorter sentence further down may still fit
            if out:
                break  # a fixed word budget stops at the first sentence that does not fit
        out.append(index)
        spent += cost
        added += 1
    if not out and order:
        out.append(order[0])  # nothing fits: the top sentence alone
    return out


def choose(rule: SentenceRule, scores: np.ndarray, groups, n_words: int,
           word_rows: np.ndarray | None = None) -> list[int]:
    """The first round's sentences, in rank order (``word_rows``: ``rows_per_word``, for a budget in rows)."""
    budget = word_budget(rule, n_words, len(groups), groups, word_rows)
    return extend(rule, ranked(rule, scores, groups), groups, [], budget, rule.top_k, word_rows)


def second_round(rule: SentenceRule, scores: np.ndarray, groups, n_words: int, chosen: list[int],
                 fine_scores: np.ndarray, word_rows: np.ndarray | None = None) -> list[int]:
    """Sentences to refine after the first fine pass (``fine_scores``: the refined words' scores), in rank order."""
    if not rule.second_round:
        return []
    found = np.sort(fine_scores)[::-1]
    threshold = found[min(TOP_WORDS, len(found)) - 1] if len(found) else -np.inf
    candidates = [i for i in ranked(rule, scores, groups) if i not in chosen and scores[i] >= threshold]
    budget = word_budget(rule, n_words, len(groups), groups, word_rows)
    return extend(rule, candidates, groups, chosen, budget, None, word_rows)[len(chosen):]
