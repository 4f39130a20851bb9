"""Human rationales derived from the SST phrase-sentiment trees (plausibility: agreement with people).

The Stanford Sentiment Treebank has no highlighted words, but every node of every parse tree (each word
and each phrase) carries a crowd-sourced 0-4 sentiment label. A word-level rationale for a sentence is
derived from those labels by a documented rule (``docs/plausibility.md``). Two rules are offered:

``minimal`` (the default, dataset ``sst-rationales``)
    Mark the words under every *minimal agreeing* node: a node whose label has the sentence's polarity
    (0-1 negative, 3-4 positive) while none of its descendants does. "lovely" in "a lovely film" (a
    positive sentence) is marked alone; "not good" (label 1) in a negative sentence is marked as a
    whole because neither "not" (2) nor "good" (3) is negative on its own. Nodes covering more than
    ``max_fraction`` of the sentence are ignored (default 0.5, as in paper 000 s. 5.2), so a sentence
    whose only agreeing node is the whole sentence gets an empty rationale.

``paper000`` (dataset ``sst-rationales-p000``)
    Paper 000 s. 5.2 (and its code): the union of *all* phrases with high-confidence sentiment of the
    sentence's polarity, phrases longer than 50 % of the sentence dropped. The paper thresholds the
    continuous SST phrase score (<= 0.3 negative, >= 0.7 positive); the trees here keep only the 0-4
    label of each node (bins [0, .2], (.2, .4], (.4, .6], (.6, .8], (.8, 1]), so the threshold cannot
    be reproduced exactly: ``strength="any"`` keeps labels 0-1 / 3-4 (scores <= 0.4 / > 0.6, slightly
    looser than the paper) and ``strength="strong"`` keeps 0 / 4 (<= 0.2 / > 0.8, stricter).

The sentence polarity is the gold label (the rationale belongs to the dataset, not to a model); paper 000
matched phrases to the *predicted* label and scored only correctly predicted examples, which the
plausibility evaluator reproduces with its ``only_correct`` option (then gold = predicted).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from corpora.records import DataError, Example, split_words
from corpora.sst import TREE_SPLITS, TreeNode, load_sst_trees

RULES = ("minimal", "paper000")
STRENGTHS = ("any", "strong")


@dataclass(frozen=True)
class SstRule:
    """How a rationale is read off an SST tree."""

    rule: str = "minimal"  # "minimal" or "paper000"
    strength: str = "any"  # "any": labels 0-1 / 3-4 count; "strong": only 0 / 4
    max_fraction: float | None = 0.5  # nodes longer than this share of the sentence are ignored (None = keep all)

    def __post_init__(self):
        if self.rule not in RULES:
            raise ValueError(f"Unknown SST rationale rule '{self.rule}'; choose one of {', '.join(RULES)}.")
        if self.strength not in STRENGTHS:
            raise ValueError(f"Unknown strength '{self.strength}'; choose one of {', '.join(STRENGTHS)}.")
        if self.max_fraction is not None and not 0 < self.max_fraction <= 1:
            raise ValueError("max_fraction must be in (0, 1] or None.")

    def describe(self) -> str:
        labels = "0-1 / 3-4" if self.strength == "any" else "0 / 4"
        cap = "no length cap" if self.max_fraction is None else f"nodes longer than {self.max_fraction:.0%} of the " \
                                                                 f"sentence ignored"
        if self.rule == "minimal":
            return f"words under minimal nodes agreeing with the sentence label (node labels {labels}; {cap})"
        return f"union of all phrases agreeing with the sentence label (paper 000 s. 5.2; labels {labels}; {cap})"


RULE_PRESETS = {
    "minimal": SstRule("minimal", "any", 0.5),
    "paper000": SstRule("paper000", "any", 0.5),
}


def node_polarity(label: int, strength: str = "any") -> int:
    """+1 positive, -1 negative, 0 neutral (or not strong enough) for a 0-4 SST label."""
    if strength == "strong":
        return 1 if label == 4 else -1 if label == 0 else 0
    return 1 if label >= 3 else -1 if label <= 1 else 0


def _nodes(root: TreeNode):
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def rationale_from_tree(root: TreeNode, polarity: int, rule: SstRule = SstRule()) -> tuple[int, ...]:
    """0/1 mask over the words of the tree (``root.start .. root.end``) for a sentence of ``polarity`` (+1/-1)."""
    if polarity not in (-1, 1):
        raise ValueError("polarity must be +1 (positive) or -1 (negative)")
    n_words = root.end - root.start
    limit = n_words * rule.max_fraction if rule.max_fraction is not None else float("inf")

    def agrees(node: TreeNode) -> bool:
        return node_polarity(node.label, rule.strength) == polarity

    def fits(node: TreeNode) -> bool:
        return node.end - node.start <= limit + 1e-9

    mask = [0] * n_words
    if rule.rule == "paper000":
        chosen = [node for node in _nodes(root) if agrees(node) and fits(node)]
    else:
        chosen = []

        def visit(node: TreeNode) -> bool:
            """Mark the minimal agreeing nodes below ``node``; returns whether any descendant-or-self agrees."""
            below = False
            for child in node.children:
                below = visit(child) or below
            if agrees(node) and not below:
                if fits(node):
                    chosen.append(node)
                return True
            return below or agrees(node)

        visit(root)
    for node in chosen:
        for index in range(node.start - root.start, node.end - root.start):
            mask[index] = 1
    return tuple(mask)


def with_sst_rationales(examples: list[Example], rule: SstRule, dataset: str) -> list[Example]:
    """Copies of binary SST tree examples with the derived rationale (and the rule in ``extra``)."""
    result = []
    for example in examples:
        root = example.extra["tree"]
        n_words = len(split_words(example.text))
        if root.end - root.start != n_words:  # the tree and the sentence must count the same words
            raise DataError(f"{example.id}: the tree covers {root.end - root.start} words but the sentence has "
                            f"{n_words}; the SST tree file is damaged.")
        polarity = 1 if example.label == 1 else -1
        mask = rationale_from_tree(root, polarity, rule)
        result.append(dataclasses.replace(
            example, id=example.id.replace("sst-trees:", f"{dataset}:", 1), rationale=mask, dataset=dataset,
            extra={**example.extra, "rationale_rule": rule.describe()}))
    return result


def load_sst_rationales(split: str = "dev", rule: str | SstRule = "minimal") -> list[Example]:
    """Binary SST sentences (= SST-2) with a rationale derived from the phrase labels by ``rule``."""
    if split not in TREE_SPLITS:
        raise DataError(f"Unknown SST split '{split}'; choose one of {', '.join(TREE_SPLITS)}.")
    chosen = RULE_PRESETS[rule] if isinstance(rule, str) else rule
    dataset = "sst-rationales" if chosen == RULE_PRESETS["minimal"] else \
        "sst-rationales-p000" if chosen == RULE_PRESETS["paper000"] else "sst-rationales-custom"
    return with_sst_rationales(load_sst_trees(split, binary=True), chosen, dataset)


def load_sst_rationales_p000(split: str = "dev") -> list[Example]:
    return load_sst_rationales(split, "paper000")
