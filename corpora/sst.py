"""SST-2 sentences (stsa.binary.*) and the SST PTB trees with phrase-level sentiment."""
from __future__ import annotations

from dataclasses import dataclass

from corpora.hub import local_folder_or_hub_frame
from corpora.locate import find_dataset_dir, read_lines
from corpora.records import SENTIMENT_LABELS, DataError, Example

SST2_SPLITS = ("train", "dev", "test")
TREE_SPLITS = ("train", "dev", "test")


def load_sst2(split: str = "dev") -> list[Example]:
    """SST-2 sentence-level binary sentiment (6,920 / 872 / 1,821), label 1 = positive."""
    if split not in SST2_SPLITS:
        raise DataError(f"Unknown SST-2 split '{split}'; choose one of {', '.join(SST2_SPLITS)}.")
    folder, frame = local_folder_or_hub_frame("sst2-sentences", "sst2", split)
    if frame is not None:
        return [Example(id=f"sst2:{split}:{i}", text=row.sentence, label=int(row.label) if row.label >= 0 else None,
                        label_names=SENTIMENT_LABELS, dataset="sst2") for i, row in enumerate(frame.itertuples())]
    examples: list[Example] = []
    path = folder / f"stsa.binary.{split}"
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        if label not in {"0", "1"} or not text.strip():
            raise DataError(f"{path}, line {number}: expected '<0|1> <sentence>'.")
        examples.append(Example(id=f"sst2:{split}:{len(examples)}", text=text.strip(), label=int(label),
                                label_names=SENTIMENT_LABELS, dataset="sst2"))
    return examples


@dataclass
class TreeNode:
    """A node of an SST parse tree: a 0-4 sentiment label over the words [start, end)."""

    label: int
    start: int
    end: int
    children: list[TreeNode]

    @property
    def is_leaf(self) -> bool:
        return not self.children


def parse_tree(line: str) -> tuple[TreeNode, list[str]]:
    """Parse one PTB-style SST tree, e.g. ``(3 (2 It) (4 (4 's) ...))``, into nodes and its words.

    Node spans count whitespace words, so they index ``" ".join(words).split()`` directly.
    """
    tokens = line.replace("(", " ( ").replace(")", " ) ").split()
    words: list[str] = []
    position = 0

    def node() -> TreeNode:
        nonlocal position
        if tokens[position] != "(":
            raise ValueError(f"expected '(' at token {position}")
        label = int(tokens[position + 1])
        position += 2
        start = len(words)
        children = []
        if tokens[position] == "(":
            while tokens[position] == "(":
                children.append(node())
        else:  # a leaf; a few leaves hold several space-separated words, e.g. (2 8 1\/2)
            while tokens[position] != ")":
                words.append(tokens[position].replace("\\/", "/"))
                position += 1
        if tokens[position] != ")":
            raise ValueError(f"expected ')' at token {position}")
        position += 1
        return TreeNode(label=label, start=start, end=len(words), children=children)

    root = node()
    if position != len(tokens):
        raise ValueError("trailing tokens after the tree")
    return root, words


# PTB escapes in the trees; the SST-2 sentence files use the plain characters.
_UNESCAPE = {"-LRB-": "(", "-RRB-": ")", "-LSB-": "[", "-RSB-": "]", "-LCB-": "{", "-RCB-": "}"}


def load_sst_trees(split: str = "dev", binary: bool = True) -> list[Example]:
    """SST trees; with ``binary`` the neutral roots are dropped and labels map 0-1 -> 0, 3-4 -> 1 (= SST-2).

    ``extra['tree']`` holds the parsed root node (word indices refer to ``text.split()``).
    """
    if split not in TREE_SPLITS:
        raise DataError(f"Unknown SST tree split '{split}'; choose one of {', '.join(TREE_SPLITS)}.")
    path = find_dataset_dir("sst-ptb-trees") / f"{split}.txt"
    examples = []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            root, words = parse_tree(line)
        except (ValueError, IndexError) as error:
            raise DataError(f"{path}, line {number}: malformed tree ({error}).") from error
        words = [_UNESCAPE.get(w, w) for w in words]
        names: tuple[str, ...]
        if binary:
            if root.label == 2:
                continue
            label, names = int(root.label > 2), SENTIMENT_LABELS
        else:
            label, names = root.label, ("very negative", "negative", "neutral", "positive", "very positive")
        examples.append(Example(id=f"sst-trees:{split}:{number - 1}", text=" ".join(words), label=label,
                                label_names=names, dataset="sst-trees", extra={"tree": root}))
    return examples
