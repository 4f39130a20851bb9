"""ERASER movie-review sentences with human evidence spans (Zaidan et al. 2007 rationales)."""
from __future__ import annotations

import json

from corpora.eraser_spans import evidence_mask
from corpora.locate import find_dataset_dir, read_lines
from corpora.records import SENTIMENT_LABELS, DataError, Example

ERASER_SPLITS = ("train", "validation", "test")


def sentence_file(split: str, name: str):
    """The shared ERASER sentence file of ``split`` ("dev" is "validation"); ``name`` names the dataset in the
    message for an unknown split."""
    if split == "dev":
        split = "validation"
    if split not in ERASER_SPLITS:
        raise DataError(f"Unknown {name} split '{split}'; choose one of {', '.join(ERASER_SPLITS)}.")
    return find_dataset_dir("eraser-movies-sentences") / f"{split}.jsonl"


def load_eraser_movies(split: str = "validation") -> list[Example]:
    """One example per unique sentence; the rationale is the union of all its evidence spans."""
    split = "validation" if split == "dev" else split
    path = sentence_file(split, "ERASER")
    grouped: dict[str, dict] = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            sentence, label, evidence = row["sentence"], int(row["label"]), row["evidence"]["text"]
        except (ValueError, KeyError, TypeError) as error:
            raise DataError(f"{path}, line {number}: not an ERASER row (a JSON object with sentence, an integer "
                            f"label and evidence.text).") from error
        if not isinstance(evidence, str):
            raise DataError(f"{path}, line {number}: the evidence text is not a string.")
        entry = grouped.setdefault(sentence, {"label": label, "evidence": [], "docid": row["evidence"].get("docid")})
        entry["evidence"].append(row["evidence"])
    examples = []
    for index, (sentence, entry) in enumerate(grouped.items()):
        # evidence placed at word boundaries, repeated phrases disambiguated by document offset (eraser_spans)
        examples.append(Example(id=f"eraser-movies:{split}:{index}", text=sentence.strip(), label=entry["label"],
                                label_names=SENTIMENT_LABELS, rationale=evidence_mask(sentence, entry["evidence"]),
                                dataset="eraser-movies", extra={"docid": entry["docid"]}))
    return examples
