"""Minimal-flip counterfactual search: the fewest words to remove (or to replace with a masked LM's candidates) so
that the prediction changes.

Greedy first, then an exact check where the budget allows it (measured: on 40 short sentences the greedy flip was one
word larger than the brute-force minimum in 3).

Greedy: the first round is leave-one-out: every single change is classified in one batch, and a change that flips
the prediction is a one-word answer. Otherwise the change that lowers the predicted class's probability most is kept,
and each later round tries adding one more change to the kept ones, the words visited in leave-one-out order (most
influential first), at most ``width`` words per round. It stops at the first flip, when ``max_words`` words are
changed, or when the next round would pass ``budget`` classified inputs. It finds *a* small flip, not always the
smallest.

Exact (breadth first over subsets of increasing size): with the greedy flip of g words, every change of 2, ..., g - 1
words (1 word is the leave-one-out round) is classified, size by size, in batches; the first size with a flip gives
the minimum (among its flips, the one leaving the original class the lowest probability), and if none flips the greedy
flip is the minimum. A size is only searched when all of its changes fit in what is left of ``budget`` (so a result
marked exact is proven minimal); otherwise the greedy flip is returned and marked greedy (``Flip.search``). Removing
words, the changes of k words are C(n, k); replacing them, each word's candidates multiply. With the default budget
(1,000 classified inputs) removing words, a greedy flip of 1 or 2 words is always proven, of 3 words on inputs up to
43 words, of 4 words up to 17, of 5 words up to 12 (README, "Error analysis").

Every changed input goes through the one perturbation engine: removal with its operator (``delete`` by default),
replacement as a fixed fill (``FixedFill`` through the ``mlm`` operator), so it is tokenized like every other fill.
The masked LM's candidates for a word are proposed in the original sentence (one masked word at a time).
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from models import Encoding, Operator, TextClassifier, UserFacingError, perturbed_proba
from models.mlm import FixedFill, MaskedLMFiller

REMOVE, REPLACE = "remove", "replace"
MODES = (REMOVE, REPLACE)
BUDGET = 1000  # classified inputs, greedy and exact together
WIDTH = 16  # words tried per greedy round
GREEDY, EXACT = "greedy", "exact"
CHUNK = 256  # changes classified per batch of the exact search


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
    search: str = GREEDY  # EXACT: no change of fewer words flips it (or, not found: none of at most max_words does)

    @property
    def size(self) -> int:
        return len(self.changes)

    def diff(self) -> list[tuple[str, str, str | None]]:
        """Per word: (status, word, replacement) with status "kept", "removed" or "replaced"."""
        changed = dict(self.changes)
        out: list[tuple[str, str, str | None]] = []
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
        return {"found": self.found, "mode": self.mode, "search": self.search, "size": self.size, "original_class": self.original_class,
                "original_probability": self.original_probability, "new_class": self.new_class,
                "new_probability_of_original": self.new_probability, "evaluated": self.evaluated,
                "changes": [{"index": i, "word": self.words[i], "replacement": r} for i, r in self.changes],
                "counterfactual": text, "counterfactual_pair": pair}


def mlm_candidates(filler: MaskedLMFiller, encoding: Encoding, k: int = 3) -> list[list[str]]:
    """Up to ``k`` replacement words per word (never the word itself), one masked-LM batch."""
    filler = filler.with_options(exclude_original=True)
    found = filler.top_k([encoding] * encoding.n_words, list(range(encoding.n_words)), k=k)
    return [[candidate.word for candidate in row] for row in found]


def probabilities_after(classifier: TextClassifier, encoding: Encoding, states: Sequence[Mapping[int, str | None]],
                   operator: Operator) -> np.ndarray:
    keep = np.ones((len(states), encoding.n_words), dtype=bool)
    for row, state in enumerate(states):
        keep[row, list(state)] = False
    if all(replacement is None for state in states for replacement in state.values()):
        return perturbed_proba(classifier, encoding, keep, operator)
    # a search either removes (None) or replaces (a word): here every change is a replacement
    rows = [[word if (new := state.get(i)) is None else new for i, word in enumerate(encoding.words)] for state in states]
    return perturbed_proba(classifier, encoding, keep, Operator.MLM, FixedFill(rows))


def minimal_flip(classifier: TextClassifier, encoding: Encoding, mode: str = REMOVE,
                 candidates: list[list[str]] | None = None, operator: Operator | str = Operator.DELETE,
                 budget: int = BUDGET, width: int = WIDTH, max_words: int | None = None, exact: bool = True) -> Flip:
    """Search for the fewest changes that flip the prediction (see the module docstring): greedy, then (``exact``)
    proven minimal by a breadth-first search over smaller changes where ``budget`` allows.

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
    moves: dict[int, list[str | None]] = {
        i: ([None] if mode == REMOVE or candidates is None else list(dict.fromkeys(candidates[i]))) for i in range(n)}

    def result(state: dict, probabilities: np.ndarray, found: bool, evaluated: int) -> Flip:
        return Flip(tuple(encoding.words), tuple(encoding.word_segment), tuple(state.items()), target,
                    float(original[target]), int(np.argmax(probabilities)), float(probabilities[target]), found,
                    evaluated, mode)

    greedy = _greedy(classifier, encoding, original, operator, budget, width, max_words, moves, target, result)
    return _exact(classifier, encoding, operator, budget, max_words, moves, target, result, greedy) if exact else greedy


def _greedy(classifier, encoding, original, operator, budget, width, max_words, moves, target, result) -> Flip:
    n = encoding.n_words
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
        probabilities = probabilities_after(classifier, encoding, [{**state, i: m} for i, m in tried], operator)
        evaluated += len(tried)
        flipped = np.argmax(probabilities, axis=1) != target
        best = int(np.argmin(np.where(flipped, probabilities[:, target] - 2.0, probabilities[:, target])))
        if not state:  # leave-one-out order: each word by its best single change
            lowest: dict[int, float] = {}
            for (i, _), p in zip(tried, probabilities[:, target]):
                lowest[i] = min(lowest.get(i, np.inf), p)
            order = sorted(lowest, key=lambda i: (lowest[i], i))
        i, move = tried[best]
        state = {**state, i: move}
        current = probabilities[best]
        if flipped[best]:
            return result(state, current, True, evaluated)
    return result(state, current, False, evaluated)


def _exact(classifier, encoding, operator, budget, max_words, moves, target, result, greedy: Flip) -> Flip:
    """Breadth first over changes of 2, 3, ... words up to one fewer than the greedy flip (up to ``max_words`` when
    greedy found none), each size searched only when all its changes fit in the budget left (module docstring)."""
    n, evaluated = encoding.n_words, greedy.evaluated
    first = 2 if evaluated > 0 else 1  # the greedy's first (leave-one-out) round tried every single change
    last = greedy.size - 1 if greedy.found else max_words
    for size in range(first, last + 1):
        if evaluated + _changes_of_size([len(moves[i]) for i in range(n)], size) > budget:
            return greedy  # this size cannot be searched in full: the greedy flip stays, marked greedy
        states = (dict(zip(words, chosen)) for words in itertools.combinations(range(n), size)
                  for chosen in itertools.product(*(moves[i] for i in words)))
        while chunk := list(itertools.islice(states, CHUNK)):
            probabilities = probabilities_after(classifier, encoding, chunk, operator)
            evaluated += len(chunk)
            flipped = np.flatnonzero(np.argmax(probabilities, axis=1) != target)
            if len(flipped):
                best = int(flipped[np.argmin(probabilities[flipped, target])])
                return replace(result(chunk[best], probabilities[best], True, evaluated), search=EXACT)
    return replace(greedy, evaluated=evaluated, search=EXACT)  # nothing smaller flips (or nothing at all)


def _changes_of_size(counts: list[int], size: int) -> int:
    """How many changes of exactly ``size`` words there are when word i has ``counts[i]`` possible changes (the
    elementary symmetric polynomial of the counts; C(n, size) when every count is 1)."""
    ways = [1] + [0] * size
    for count in counts:
        for k in range(size, 0, -1):
            ways[k] += ways[k - 1] * count
    return ways[size]
