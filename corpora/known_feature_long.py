"""The known-feature task at document scale: ``known-feature-long``.

Paper 003's known-feature task (s. 3.1, ``corpora/known_feature.py``) with documents instead of sentences: each
document joins 10-40 SST-2 sentences drawn at random (seeded) from the split, the label is drawn i.i.d.
Bernoulli(0.5) and its label word ("positive" / "negative") is planted at a random word position of the document
(not at the end, where a truncating model would lose it and a windowed one finds it in the last window only). The
rationale is 1 on that word alone. A model trained on it can use only the planted word: which methods find one
word in 1,000, and at what cost? ``train``: 1,000 documents, ``dev``: 200.
"""
from __future__ import annotations

import random

from corpora.known_feature import LABEL_WORDS
from corpora.records import SENTIMENT_LABELS, DataError, Example, split_words
from corpora.sst import load_sst2

NAME = "known-feature-long"
SPLITS = ("train", "dev")
SIZES = {"train": 1000, "dev": 200}
SENTENCES = (10, 40)


def make_known_feature_long(sentences: list[str], n: int, seed: int = 0, prefix: str = NAME) -> list[Example]:
    rng = random.Random(seed)
    out = []
    for index in range(n):
        words = [w for s in rng.sample(sentences, rng.randint(*SENTENCES)) for w in split_words(s)]
        label = rng.randint(0, 1)
        position = rng.randint(0, len(words))
        words.insert(position, LABEL_WORDS[label])
        rationale = tuple(int(i == position) for i in range(len(words)))
        out.append(Example(id=f"{prefix}:{index}", text=" ".join(words), label=label, label_names=SENTIMENT_LABELS,
                           rationale=rationale, dataset=NAME, extra={"planted_at": position, "seed": seed}))
    return out


def load_known_feature_long(split: str = "dev") -> list[Example]:
    if split not in SPLITS:
        raise DataError(f"Unknown {NAME} split '{split}'; choose one of {', '.join(SPLITS)}.")
    sentences = [example.text for example in load_sst2(split)]
    return make_known_feature_long(sentences, SIZES[split], seed=0, prefix=f"{NAME}:{split}")
