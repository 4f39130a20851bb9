"""MR sentence polarity (Pang & Lee 2005): 10,662 sentences without an official split."""
from __future__ import annotations

import random

from corpora.locate import find_dataset_dir, read_lines
from corpora.records import SENTIMENT_LABELS, DataError, Example

MR_SPLITS = ("all", "train", "test")
TEST_FRACTION = 0.1
SPLIT_SEED = 0


def load_mr(split: str = "all") -> list[Example]:
    """``all``, or a seeded 90/10 ``train``/``test`` split (seed 0)."""
    if split not in MR_SPLITS:
        raise DataError(f"Unknown MR split '{split}'; choose one of {', '.join(MR_SPLITS)}.")
    path = find_dataset_dir("movie-review-polarity") / "rt-polarity.all"
    examples: list[Example] = []
    for number, line in enumerate(read_lines(path, encoding="latin-1"), start=1):
        if not line.strip():
            continue
        label, _, text = line.partition(" ")
        if label not in {"0", "1"}:
            raise DataError(f"{path}, line {number}: expected '<0|1> <sentence>'.")
        examples.append(Example(id=f"mr:{len(examples)}", text=text.strip(), label=int(label),
                                label_names=SENTIMENT_LABELS, dataset="mr"))
    if split == "all":
        return examples
    order = list(range(len(examples)))
    random.Random(SPLIT_SEED).shuffle(order)
    n_test = int(len(order) * TEST_FRACTION)
    chosen = sorted(order[:n_test]) if split == "test" else sorted(order[n_test:])
    return [examples[i] for i in chosen]
