"""ERASER movie-review sentences with human evidence spans (Zaidan et al. 2007 rationales)."""
from __future__ import annotations

import json

from .locate import find_dataset_dir, read_lines
from .records import SENTIMENT_LABELS, DataError, Example, mask_from_spans

ERASER_SPLITS = ("train", "validation", "test")


def load_eraser_movies(split: str = "validation") -> list[Example]:
    """One example per unique sentence; the rationale is the union of all its evidence spans."""
    if split == "dev":
        split = "validation"
    if split not in ERASER_SPLITS:
        raise DataError(f"Unknown ERASER split '{split}'; choose one of {', '.join(ERASER_SPLITS)}.")
    path = find_dataset_dir("eraser-movies-sentences") / f"{split}.jsonl"
    grouped: dict[str, dict] = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            sentence, label, evidence = row["sentence"], int(row["label"]), row["evidence"]["text"]
        except (ValueError, KeyError, TypeError) as error:
            raise DataError(f"{path}, line {number}: not an ERASER row ({error}).") from error
        entry = grouped.setdefault(sentence, {"label": label, "spans": [], "docid": row["evidence"].get("docid")})
        start = sentence.find(evidence)
        if start >= 0:
            entry["spans"].append((start, start + len(evidence)))
    examples = []
    for index, (sentence, entry) in enumerate(grouped.items()):
        text = sentence.strip()
        offset = len(sentence) - len(sentence.lstrip())
        spans = [(s - offset, e - offset) for s, e in entry["spans"]]
        examples.append(Example(id=f"eraser-movies:{split}:{index}", text=text, label=entry["label"],
                                label_names=SENTIMENT_LABELS, rationale=mask_from_spans(text, spans),
                                dataset="eraser-movies", extra={"docid": entry["docid"]}))
    return examples
