"""Minimal-flip counterfactual search: the fewest words to remove (or to replace with a masked LM's candidates) so
that the prediction changes.

Greedy with a budget. The first round is leave-one-out: every single change is classified in one batch, and a
change that flips the prediction is a one-word answer. Otherwise the change that lowers the predicted class's
probability most is kept, and each later round tries adding one more change to the kept ones, the words visited in
leave-one-out order (most influential first), at most ``width`` words per round. The search stops at the first flip,
when ``max_words`` words are changed, or when the next round would pass ``budget`` classified inputs. Greedy search
finds *a* small flip, not always the smallest one (that is a search over every subset).

Every changed input goes through the one perturbation engine: removal with its operator (``delete`` by default),
replacement as a fixed fill (``FixedFill`` through the ``mlm`` operator), so it is tokenized like every other fill.
The masked LM's candidates for a word are proposed in the original sentence (one masked word at a time).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models import Encoding, Operator, TextClassifier, UserFacingError, perturbed_proba
from models.mlm import FixedFill, MaskedLMFiller

REMOVE, REPLACE = "remove", "replace"
MODES = (REMOVE, REPLACE)
BUDGET = 400  # classified inputs
WIDTH = 16  # words tried per greedy round


@dataclass(frozen=True)
class Flip:
    """The outcome of a search: the changes kept (word index -> replacement, None = removed), in the order chosen."""

    words: tuple[str, ...]
    segments: tuple[int, ...]
    changes: tuple[tuple[int, str | None], ...]
    original_class: int
    original_probability: float
    new_class: int  # the prediction after the changes (the original class when no flip was found)
    new_probability: float  # the probability of the original class after the changes
    found: bool
    evaluated: int  # perturbed inputs classified
    mode: str

    @property
    def size(self) -> int:
        return len(self.changes)

    def diff(self) -> list[tuple[str, str, str | None]]:
        """Per word: (status, word, replacement) with status "kept", "removed" or "replaced"."""
        changed = dict(self.changes)
        out = []
        for index, word in enumerate(self.words):
            if index not in changed:
                out.append(("kept", word, None))
            else:
                out.append(("removed", word, None) if changed[index] is None else ("replaced", word, changed[index]))
        return out

    def texts(self) -> tuple[str, str | None]:
        """The counterfactual text (and pair): kept and replacement words joined by single spaces."""
        changed = dict(self.changes)
        parts: dict[int, list[str]] = {0: [], 1: []}
        for index, (word, segment) in enumerate(zip(self.words, self.segments)):
            new = changed.get(index, word)
            if new is not None:
                parts[segment].append(new)
        return " ".join(parts[0]), (" ".join(parts[1]) if 1 in self.segments else None)

    def to_dict(self) -> dict:
        text, pair = self.texts()
        return {"found": self.found, "mode": self.mode, "size": self.size, "original_class": self.original_class,
                "original_probability": self.original_probability, "new_class": self.new_class,
                "new_probability_of_original": self.new_probability, "evaluated": self.evaluated,
                "changes": [{"index": i, "word": self.words[i], "replacement": r} for i, r in self.changes],
                "counterfactual": text, "counterfactual_pair": pair}


def mlm_candidates(filler: MaskedLMFiller, encoding: Encoding, k: int = 3) -> list[list[str]]:
    """Up to ``k`` replacement words per word (never the word itself), one masked-LM batch."""
    filler = filler.with_options(exclude_original=True)
    found = filler.top_k([encoding] * encoding.n_words, list(range(encoding.n_words)), k=k)
    return [[candidate.word for candidate in row] for row in found]


def _probabilities(classifier: TextClassifier, encoding: Encoding, states: list[dict[int, str | None]],
                   operator: Operator) -> np.ndarray:
    keep = np.ones((len(states), encoding.n_words), dtype=bool)
    for row, state in enumerate(states):
        keep[row, list(state)] = False
    if all(replacement is None for state in states for replacement in state.values()):
        return perturbed_proba(classifier, encoding, keep, operator)
    rows = [[state.get(i, word) for i, word in enumerate(encoding.words)] for state in states]
    return perturbed_proba(classifier, encoding, keep, Operator.MLM, FixedFill(rows))


def minimal_flip(classifier: TextClassifier, encoding: Encoding, mode: str = REMOVE,
                 candidates: list[list[str]] | None = None, operator: Operator | str = Operator.DELETE,
                 budget: int = BUDGET, width: int = WIDTH, max_words: int | None = None) -> Flip:
    """Search for the fewest changes that flip the prediction (see the module docstring).

    ``mode`` "remove" removes words with ``operator``; "replace" puts one of ``candidates[i]`` (e.g.
    ``mlm_candidates``) in place of word i.
    """
    if mode not in MODES:
        raise UserFacingError(f"Unknown counterfactual mode '{mode}'; use one of {', '.join(MODES)}.")
    n = encoding.n_words
    if n == 0:
        raise UserFacingError("The text has no words to change; type a sentence first.")
    if mode == REPLACE and (candidates is None or len(candidates) != n):
        raise UserFacingError("Replacing words needs replacement candidates for every word (a masked LM).")
    operator = Operator(operator)
    original = classifier.proba_of(encoding)
    target = int(np.argmax(original))
    # removing every word leaves nothing to classify: at most n - 1 removals
    max_words = min(max_words or n, n if mode == REPLACE else n - 1)
    moves = {i: ([None] if mode == REMOVE else list(dict.fromkeys(candidates[i]))) for i in range(n)}

    def result(state: dict, probabilities: np.ndarray, found: bool, evaluated: int) -> Flip:
        return Flip(tuple(encoding.words), tuple(encoding.word_segment), tuple(state.items()), target,
                    float(original[target]), int(np.argmax(probabilities)), float(probabilities[target]), found,
                    evaluated, mode)

    state: dict[int, str | None] = {}
    current, evaluated = original, 0
    order = list(range(n))  # becomes the leave-one-out order after the first round
    while len(state) < max_words:
        tried = [(i, move) for i in order if i not in state for move in moves[i]]
        if state:  # later rounds: the first ``width`` unchanged words in leave-one-out order
            words = list(dict.fromkeys(i for i, _ in tried))[:width]
            tried = [(i, m) for i, m in tried if i in words]
        if not tried or evaluated + len(tried) > budget:
            break
        probabilities = _probabilities(classifier, encoding, [{**state, i: m} for i, m in tried], operator)
        evaluated += len(tried)
        flipped = np.argmax(probabilities, axis=1) != target
        best = int(np.argmin(np.where(flipped, probabilities[:, target] - 2.0, probabilities[:, target])))
        if not state:  # leave-one-out order: each word by its best single change
            lowest = {}
            for (i, _), p in zip(tried, probabilities[:, target]):
                lowest[i] = min(lowest.get(i, np.inf), p)
            order = sorted(lowest, key=lambda i: (lowest[i], i))
        i, move = tried[best]
        state = {**state, i: move}
        current = probabilities[best]
        if flipped[best]:
            return result(state, current, True, evaluated)
    return result(state, current, False, evaluated)
