"""The known-feature task of paper 003 (s. 3.1, "augmented / spurious SST"): a dataset whose one predictive
feature is known.

1. Take SST-2 sentences (any examples work).
2. Randomize the labels: i.i.d. Bernoulli(0.5) from a seeded generator (the thesis' code sets no seed; we do,
   so the data can be regenerated exactly).
3. Append the label word ("positive" for 1, "negative" for 0) at the end, after a space.
4. The ground truth is the appended word: ``rationale`` = 1 on it, 0 elsewhere (one word, so k = 1).

A model trained on it can only use the appended word, so a faithful explanation must rank it first.
The thesis adds the feature to 100 % of inputs; ``fraction`` < 1 grades it (s. 2.2.3.1), leaving the other
inputs without a label word and with an all-zero rationale (skipped by the ground-truth metrics).
"""
from __future__ import annotations

import random

from corpora.records import SENTIMENT_LABELS, DataError, Example, split_words
from corpora.sst import load_sst2

LABEL_WORDS = ("negative", "positive")
NAME = "known-feature"
SPLITS = ("train", "dev")


def make_known_feature(examples: list[Example], seed: int = 0, label_words: tuple[str, str] = LABEL_WORDS,
                       fraction: float = 1.0, name: str = NAME) -> list[Example]:
    """The examples with randomized labels and the label word appended (paper 003 s. 3.1)."""
    if not 0.0 <= fraction <= 1.0:
        raise DataError(f"fraction must be between 0 and 1; got {fraction}.")
    if len(label_words) != 2 or any(len(split_words(w)) != 1 for w in label_words):
        raise DataError("label_words must be two single words (for labels 0 and 1).")
    rng = random.Random(seed)
    out = []
    for example in examples:
        if example.pair is not None:
            raise DataError("The known-feature task is built from single sentences, not sentence pairs.")
        label = rng.randint(0, 1)
        n = len(split_words(example.text))
        if rng.random() < fraction:
            text = f"{example.text} {label_words[label]}"
            rationale = (0,) * n + (1,)
        else:
            text, rationale = example.text, (0,) * n
        out.append(Example(id=f"{name}:{example.id}", text=text, label=label,
                           label_names=SENTIMENT_LABELS if label_words == LABEL_WORDS else tuple(label_words),
                           rationale=rationale, dataset=name,
                           extra={"source": example.id, "original_label": example.label, "seed": seed}))
    return out


def parse_known_feature_id(dataset_id: str) -> tuple[str, int]:
    """``known-feature:<split>[:<seed>]`` -> (split, seed); split is train or dev of SST-2."""
    parts = dataset_id.split(":")
    if parts[0] != NAME or len(parts) > 3:
        raise DataError(f"Expected known-feature:<train|dev>[:<seed>], got '{dataset_id}'.")
    split = parts[1] if len(parts) > 1 and parts[1] else "dev"
    if split not in SPLITS:
        raise DataError(f"Unknown known-feature split '{split}'; choose train or dev.")
    try:
        seed = int(parts[2]) if len(parts) > 2 else 0
    except ValueError:
        raise DataError(f"The known-feature seed must be an integer; got '{parts[2]}'.") from None
    return split, seed


def load_known_feature_split(split: str = "dev") -> list[Example]:
    """The dataset catalogue's loader: ``<train|dev>[:<seed>]`` (the part of the id after ``known-feature:``),
    the task built from SST-2 ``train`` or ``dev`` with that label seed."""
    split, seed = parse_known_feature_id(f"{NAME}:{split}")
    return make_known_feature(load_sst2(split), seed=seed)


def load_known_feature(dataset_id: str = "known-feature:dev", limit: int | None = None) -> list[Example]:
    """The known-feature task from its full id, ``known-feature:<train|dev>[:<seed>]``."""
    parse_known_feature_id(dataset_id)  # the id names this task
    examples = load_known_feature_split(dataset_id.partition(":")[2])
    return examples[:limit] if limit else examples
