"""Partition SHAP: Owen values over a hierarchy of the words (shap's ``PartitionExplainer`` with its ``Text``
masker, the SHAP that ferret-xai runs by default).

The words are grouped into a binary tree by shap's text heuristic (``shap.maskers._text.partition_tree``:
neighbours merge first, sub-word pieces and contractions before words, punctuation and "but"/"and"/"or" last).
Starting at the root with every word removed (f00) and every word present (f11), a node splits into its two
children L and R; with f10 = f(context + L) and f01 = f(context + R) each child is visited twice, once in the
context without its sibling and once with it, at half the weight. A leaf gets f(with it) - f(without it) times
its weight; so the value of a word is its Owen value under the tree. The visits are ordered by a priority
queue (largest |change| x weight first) and stop at ``max_evals`` model calls; what is left unexpanded is
spread over the node's words by size, as shap does.

Batches: the masks depend only on the tree and a node's context, so when the whole tree fits the budget every
mask is known in advance and all go in one model call. When the budget binds, the queue runs in shap's batches
(``queue_batch`` masks, shap's Text masker default 5) so that the same nodes are expanded, and each model call also
computes the masks of the queue's next nodes (look-ahead): later batches are then answered without a call. The
visits and the budget count are those of shap's loop; only the batches the values come from differ.

Port of shap 0.44 (``explainers/_partition.py::owen`` with ``fixed_context=None``, ``lower_credit``, and
``maskers/_text.py::merge_score``), with two differences of unit and engine: the leaves are the project's
whitespace words (shap's are sub-word tokens), and a removed word goes through the shared perturbation engine
(``models.perturb``; [MASK] by default, shap's Text masker default for BERT-like tokenizers) on token ids
instead of decoding to text and re-tokenizing. [CLS] and [SEP] are the two empty-string leaves shap's masker
keeps fixed; they are in the tree (so it has shap's shape) and score 0.
"""
from __future__ import annotations

import heapq
import math
import re
from dataclasses import dataclass

import numpy as np

from explainers.base import Attribution, Explainer
from explainers.mask_forward import MaskForward, operator_label, operator_param, score_param, word_input
from explainers.params import param
from explainers.registry import register
from explainers.seeding import seed_param

OPENERS = {"(": ")"}
CLOSERS = {")": "("}
CONNECTORS = ("but", "and", "or")


# ----- the tree (shap.maskers._text) -------------------------------------------------------------------
@dataclass
class _Group:
    tokens: list[str]
    index: int


def merge_score(left: list[str], right: list[str], balanced: dict[int, bool], left_ids, right_ids) -> float:
    """shap's score of merging two neighbouring groups of tokens (higher merges first)."""
    score = 0.0
    if right[0].startswith("##"):
        score += 20
    if right[0] == "'" and (len(right) == 1 or (len(right) == 2 and right[1] in ("t", "s"))):
        score += 15
    if left[-1] == "'" and right[0] in ("t", "s"):
        score += 15
    start_ctrl = left[0].startswith("[") and left[0].endswith("]")
    end_ctrl = right[-1].startswith("[") and right[-1].endswith("]")
    if start_ctrl != end_ctrl:
        score -= 1000
    if right[0] in OPENERS and not balanced[right_ids[0]]:
        score -= 100
    if left[-1] in CLOSERS and not balanced[left_ids[-1]]:
        score -= 100
    if left[0] in OPENERS and right[-1] not in CLOSERS:
        score -= 2
    if left[-1] in CONNECTORS or right[0] in CONNECTORS:
        score -= 2
    if left[-1] == ",":
        score -= 10
    if right[0] == ",":
        score -= 10 if len(right) > 1 else 1
    if left[-1] in (".", "?", "!"):
        score -= 20
    if right[0] in (".", "?", "!"):
        score -= 20 if len(right) > 1 else 1
    return score - len(left) - len(right)


def partition_tree(tokens: list[str]) -> np.ndarray:
    """(M - 1, 4) linkage rows (left, right, distance, leaves) in shap's format; node M + r is row r."""
    m = len(tokens)
    groups = [[i] for i in range(m)]  # token positions of each group, left to right
    index = list(range(m))
    balanced = {i: t not in OPENERS and t not in CLOSERS for i, t in enumerate(tokens)}
    tree = np.zeros((max(m - 1, 0), 4))
    for row in range(m - 1):
        scores = [merge_score([tokens[i] for i in groups[g]], [tokens[i] for i in groups[g + 1]], balanced,
                              groups[g], groups[g + 1]) for g in range(len(groups) - 1)]
        g = int(np.argmax(scores))
        left, right = index[g], index[g + 1]
        size = lambda node: tree[node - m, 3] if node >= m else 1  # noqa: E731
        tree[row] = (left, right, -scores[g], size(left) + size(right))
        first, last = groups[g][0], groups[g + 1][-1]
        if tokens[first] in OPENERS and tokens[last] == OPENERS[tokens[first]]:
            balanced[first] = balanced[last] = True
        groups[g] = groups[g] + groups.pop(g + 1)
        index[g] = m + row
        index.pop(g + 1)
    if len(tree):  # Text.clustering: the distance is the group size, scaled to (0, 1]
        tree[:, 2] = tree[:, 3] / tree[:, 3].max()
    return tree


def clustering_tokens(text: str, spans: list[tuple[int, int]]) -> list[str]:
    """shap's Text.clustering names: "" for [CLS] and [SEP], each word stripped, "##" before a word glued to
    the previous one (no space or punctuation between)."""
    segments = [""] + [text[start:(spans[i + 1][0] if i + 1 < len(spans) else end)]
                       for i, (start, end) in enumerate(spans)] + [""]
    return _names(segments)


def _names(segments: list[str]) -> list[str]:
    names: list[str] = []
    for i, segment in enumerate(segments):
        glued = i > 0 and names[i - 1] != "" and not re.match(r"^.*\W$", segments[i - 1]) \
            and re.match(r"^[A-Za-z]", segment)
        names.append("##" + segment.strip() if glued else segment.strip())
    return names


def tree_leaves(encoding) -> tuple[list[str], np.ndarray]:
    """The tree's leaf names ("" for [CLS], [SEP] and the separator between a text and its pair) and which of
    them are words."""
    names = []
    for segment, text in enumerate((encoding.text, encoding.pair)):
        spans = [span for span, s in zip(encoding.word_spans, encoding.word_segment) if s == segment]
        if text is not None:
            names += clustering_tokens(text, spans)[:-1]
    names.append("")
    is_word = np.ones(len(names), dtype=bool)
    is_word[0] = is_word[-1] = False
    if encoding.pair is not None:
        is_word[sum(1 for s in encoding.word_segment if s == 0) + 1] = False
    return names, is_word


def member_matrix(tree: np.ndarray, m: int) -> np.ndarray:
    """(2M - 1, M) bool: the leaves under each node."""
    members = np.zeros((2 * m - 1, m), dtype=bool)
    members[np.arange(m), np.arange(m)] = True
    for row, (left, right, _, _) in enumerate(tree):
        members[m + row] = members[int(left)] | members[int(right)]
    return members


def full_expansion_evals(tree: np.ndarray, m: int) -> int:
    """Model calls to visit every node in every context: a node at depth d is visited 2^d times, 2 calls each."""
    total, stack = 0, [(2 * m - 2, 1)] if m > 1 else []
    while stack:
        node, visits = stack.pop()
        if node >= m:
            total += 2 * visits
            left, right = int(tree[node - m, 0]), int(tree[node - m, 1])
            stack += [(left, 2 * visits), (right, 2 * visits)]
    return total


# ----- the Owen recursion (shap.explainers._partition.owen, fixed_context=None) ------------------------
# Masks computed ahead in a model call when the budget binds: the expansions of the queue's next nodes. On 7
# SST-2 sentences at ferret's settings 64 took the model calls from 574 to 154 for 0.9 % more rows; more
# stops paying (docs/benchmarks.md, "Partition SHAP look-ahead").
AHEAD_ROWS = 64


class _Answers:
    """The set function's values by mask. A call for masks not yet known also computes the masks the next
    visits are likely to ask for (``ahead``), so that those visits need no call of their own; the values the
    queue reads are the same, only the batches they were computed in differ."""

    def __init__(self, f):
        self.f = f
        self.known: dict[bytes, float] = {}

    def __call__(self, masks: list[np.ndarray], ahead=list) -> np.ndarray:
        """Values of ``masks``; ``ahead()`` (called only when a model call is needed) lists masks to add to it."""
        todo: dict[bytes, np.ndarray] = {}
        for mask in masks:
            key = mask.tobytes()
            if key not in self.known:
                todo.setdefault(key, mask)
        if todo:
            for mask in ahead():
                key = mask.tobytes()
                if key not in self.known:
                    todo.setdefault(key, mask)
            out = self.f(np.stack(list(todo.values())))
            self.known.update(zip(todo, (float(v) for v in out)))
        return np.array([self.known[mask.tobytes()] for mask in masks])


def _expansions(tree: np.ndarray, m: int, members: np.ndarray, context: np.ndarray, node: int):
    """The two masks that expanding ``node`` in ``context`` asks for: context + its left, context + its right."""
    left, right = int(tree[node - m, 0]), int(tree[node - m, 1])
    return context | members[left], context | members[right]


def _children(tree: np.ndarray, m: int, members: np.ndarray, context: np.ndarray, node: int):
    """The (context, node) visits an expansion pushes: each child without and with its sibling."""
    left, right = int(tree[node - m, 0]), int(tree[node - m, 1])
    with_left, with_right = context | members[left], context | members[right]
    return ((context, left), (context, right), (with_right, left), (with_left, right))


def whole_tree_masks(tree: np.ndarray, m: int, members: np.ndarray) -> list[np.ndarray]:
    """Every mask a full expansion asks for (they depend on the tree only, not on the values)."""
    masks, stack = [], [(np.zeros(m, dtype=bool), 2 * m - 2)]
    while stack:
        context, node = stack.pop()
        if node >= m:
            masks += _expansions(tree, m, members, context, node)
            stack += _children(tree, m, members, context, node)
    return masks


def _ahead_masks(tree, m, members, queue, rows: int) -> list[np.ndarray]:
    """At most ``rows`` masks the next visits are likely to ask for: the expansions of the queue's next nodes in
    priority order. (Those of the children being expanded now hit less often: their priorities are not known
    before this call, and most of them are never expanded.)"""
    if rows <= 0:
        return []
    masks = []
    for *_, (context, _, _, node, _) in heap_front(queue, rows):
        if node >= m:
            masks += _expansions(tree, m, members, context, node)
    return masks[:rows]


def heap_front(queue: list, k: int) -> list:
    """The k first entries of a heap, in order, read by walking it from its root: k log k steps, not len(queue)
    (the queue holds tens of thousands of nodes at large budgets)."""
    front: list = []
    frontier = [(queue[0], 0)] if queue else []
    while frontier and len(front) < k:
        entry, i = heapq.heappop(frontier)
        front.append(entry)
        for child in (2 * i + 1, 2 * i + 2):
            if child < len(queue):
                heapq.heappush(frontier, (queue[child], child))
    return front


def owen_values(f, tree: np.ndarray, m: int, max_evals: int, queue_batch: float, seed: int,
                ahead_rows: int = AHEAD_ROWS, visits: list | None = None) -> tuple[np.ndarray, int]:
    """Leaf values of set function ``f`` (bool keep-matrix (k, M) -> (k,) scores) and the model calls counted
    as shap counts them (2 per expanded node; f00 and f11 are the other 2 of ``max_evals``). ``ahead_rows``:
    masks computed ahead in each model call when the budget binds (0: none); it changes the batches, never
    the visits (appended to ``visits``, as (node, context) pairs, where a list is given)."""
    budget = max_evals - 2
    members = member_matrix(tree, m)
    answers = _Answers(f)
    dvalues = np.zeros(2 * m - 1)
    nothing = np.zeros(m, dtype=bool)
    root = 2 * m - 2
    whole_tree = m > 1 and full_expansion_evals(tree, m) <= budget
    # every node is expanded when the whole tree fits: the order cannot change the values, and every mask is
    # known in advance, so they all go in the first call
    first_ahead = whole_tree_masks(tree, m, members) if whole_tree else \
        list(_expansions(tree, m, members, nothing, root)) if m > 1 else []
    f00, f11 = answers([nothing, ~nothing], lambda: first_ahead)
    if m == 1:
        dvalues[0] = f11 - f00
        return dvalues[:1], 2
    ties = np.random.RandomState(seed)  # shap breaks priority ties with np.random.randn()
    queue = [(0.0, 0.0, 0, (nothing, f00, f11, root, 1.0))]
    counter = 1  # heap entries never compare their payloads
    if whole_tree:
        queue_batch = math.inf
    evals = 0
    while queue:
        if evals >= budget:  # out of budget: a pending node keeps f11 - f00 for lower_credit to spread
            for *_, (_, low, high, node, weight) in queue:
                dvalues[node] += (high - low) * weight
            break
        tasks: list[tuple] = []
        masks: list[np.ndarray] = []
        while queue and len(masks) < queue_batch and evals + len(masks) < budget:
            context, low, high, node, weight = heapq.heappop(queue)[3]
            if node < m:
                dvalues[node] += (high - low) * weight
                continue
            left, right = int(tree[node - m, 0]), int(tree[node - m, 1])
            with_left, with_right = context | members[left], context | members[right]
            tasks.append((context, with_left, with_right, low, high, left, right, weight))
            masks += [with_left, with_right]
            if visits is not None:
                visits.append((node, context.tobytes()))
        if not tasks:
            continue
        # never more ahead than the budget has left: masks past it would never be asked for
        ahead_left = 0 if whole_tree else min(ahead_rows, budget - evals - len(masks))
        out = answers(masks, lambda: _ahead_masks(tree, m, members, queue, ahead_left))  # noqa: B023 (called inside answers())
        evals += len(masks)
        for i, (context, with_left, with_right, low, high, left, right, weight) in enumerate(tasks):
            f10, f01 = out[2 * i], out[2 * i + 1]
            half = weight / 2
            for child_context, child_low, child_high, child in ((context, low, f10, left), (context, low, f01, right),
                                                                (with_right, f01, high, left),
                                                                (with_left, f10, high, right)):
                heapq.heappush(queue, (-abs(child_high - child_low) * half, ties.randn(), counter,
                                       (child_context, child_low, child_high, child, half)))
                counter += 1
    values = dvalues.copy()
    _lower_credit(root, 0.0, m, values, tree)
    return values[:m], evals + 2


def _lower_credit(node: int, value: float, m: int, values: np.ndarray, tree: np.ndarray) -> None:
    """shap's lower_credit: an internal node's value is shared by its children in proportion to their size."""
    if node < m:
        values[node] += value
        return
    left, right, _, size = tree[node - m]
    left, right = int(left), int(right)
    values[node] += value
    for child in (left, right):
        child_size = tree[child - m, 3] if child >= m else 1
        _lower_credit(child, values[node] * child_size / size, m, values, tree)


@register
class PartitionShap(Explainer):
    id = "partition_shap"
    label = "Partition SHAP"
    family = "perturbation"
    description = "Owen values: Shapley values computed down a tree that groups neighbouring words, so a phrase " \
                  "gets the credit it has as a whole; quadratic in the words, not exponential."
    reference = "Lundberg & Lee 2017; shap's PartitionExplainer with the Text masker (as ferret-xai runs it)"
    stochastic = False

    @dataclass(frozen=True)
    class Params:
        max_evals: int = param(500, "Model calls", "Budget of masked inputs (shap's default 500); the tree is "
                               "expanded most-changing node first until it is spent.", min=4, max=100000)
        queue_batch: int = param(5, "Queue batch", "Masks taken from the queue before the model answers when "
                                 "the budget binds (shap's Text masker: 5); changes which nodes get expanded.",
                                 min=1, max=10000)
        operator: str = operator_param("mask")
        score: str = score_param("probability")
        seed: int = seed_param("priority ties")

    presets = {"ferret": {"max_evals": 500, "queue_batch": 5, "operator": "mask", "score": "probability"}}

    def estimate_passes(self, encoding):
        m = encoding.n_words + 2
        return min(self.params.max_evals, max(2, m * (m - 1))), 0

    def attribute(self, classifier, encoding, target):
        p = self.params
        word_input(encoding)  # a clear message for an input without words
        forward = MaskForward(classifier, encoding, p.operator, target, p.score)
        # f11 keeps every word: the input itself, whose logits the classifier keeps (one row fewer)
        forward.remember(np.ones((1, encoding.n_words), dtype=bool), classifier.logits_of(encoding)[None])
        names, is_word = tree_leaves(encoding)
        tree = partition_tree(names)
        # the [CLS] / [SEP] leaves are always kept by shap's masker: dropped before the engine, scored 0
        values, evals = owen_values(lambda keep: forward.scores(keep[:, is_word]), tree, len(names), p.max_evals,
                                    p.queue_batch, p.seed)
        return Attribution(word_scores=values[is_word], baseline=f"words removed by {operator_label(p.operator)}",
                           details={**forward.details(), "model_calls_counted_as_shap": evals,
                                    "tree_fully_expanded": full_expansion_evals(tree, len(names)) <= p.max_evals - 2})
