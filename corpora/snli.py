"""SNLI dev/test pairs with the three e-SNLI free-text explanations, and the e-SNLI highlight sample."""
from __future__ import annotations

import csv

from corpora.hub import local_folder_or_hub_frame
from corpora.locate import find_dataset_dir, read_lines
from corpora.records import NLI_LABELS, DataError, Example, split_words

SNLI_SPLITS = ("dev", "test")


def load_snli(split: str = "dev") -> list[Example]:
    """Premise/hypothesis pairs; ``extra['explanations']`` holds the e-SNLI explanations (no highlights)."""
    if split not in SNLI_SPLITS:
        raise DataError(f"Unknown SNLI split '{split}'; this offline copy has {', '.join(SNLI_SPLITS)} "
                        f"(SNLI train is not available offline).")
    folder, frame = local_folder_or_hub_frame("snli-devtest-esnli", "snli", split)
    if frame is not None:
        return [Example(id=f"snli:{split}:{i}", text=r.premise, pair=r.hypothesis, label=int(r.label),
                        label_names=NLI_LABELS, dataset="snli") for i, r in enumerate(frame.itertuples()) if r.label >= 0]
    premises = read_lines(folder / f"s1.{split}")
    hypotheses = read_lines(folder / f"s2.{split}")
    labels = read_lines(folder / f"labels.{split}")
    explanations = [read_lines(folder / f"preproc1_expl_{k}.{split}") for k in (1, 2, 3)]
    if not (len(premises) == len(hypotheses) == len(labels)):
        raise DataError(f"SNLI {split}: premise, hypothesis and label files differ in length "
                        f"({len(premises)}, {len(hypotheses)}, {len(labels)}); the data folder is damaged.")
    examples = []
    for i, (premise, hypothesis, label) in enumerate(zip(premises, hypotheses, labels)):
        if label.strip() not in NLI_LABELS:
            continue  # '-' = no gold label
        expl = [e[i] for e in explanations if i < len(e)]
        examples.append(Example(id=f"snli:{split}:{i}", text=premise.strip(), pair=hypothesis.strip(),
                                label=NLI_LABELS.index(label.strip()), label_names=NLI_LABELS, dataset="snli",
                                extra={"explanations": expl}))
    return examples


def parse_highlight_indices(value: str, n_words: int) -> list[int]:
    """e-SNLI highlight field -> word indices. ``{}`` = none; an index >= 2000 means index - 2000
    (a quirk of the original e-SNLI CSVs, see the sample's SOURCE.md)."""
    value = value.strip().strip("{}").strip()
    if not value or value == "NA":
        return []
    indices = []
    for part in value.split(","):
        index = int(part)
        if index >= 2000:
            index -= 2000
        if not 0 <= index < n_words:
            raise ValueError(f"highlight index {index} outside the {n_words} words")
        indices.append(index)
    return sorted(set(indices))


def load_esnli_highlights(split: str = "train") -> list[Example]:
    """The 90-pair e-SNLI sample with annotator 1's word highlights as the rationale."""
    if split != "train":
        raise DataError("The e-SNLI highlight sample has only the 'train' split (90 pairs).")
    path = find_dataset_dir("esnli-highlights-sample") / "assigned_samples_training.csv"
    examples = []
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except OSError as error:
        raise DataError(f"Cannot read {path}: {error.strerror}.") from error
    for number, row in enumerate(rows, start=2):
        try:
            premise, hypothesis = row["Sentence1"].strip(), row["Sentence2"].strip()
            p_words, h_words = split_words(premise), split_words(hypothesis)
            p_marked = set(parse_highlight_indices(row["Sentence1_Highlighted_1"], len(p_words)))
            h_marked = set(parse_highlight_indices(row["Sentence2_Highlighted_1"], len(h_words)))
            label = NLI_LABELS.index(row["gold_label"].strip())
        except (KeyError, ValueError) as error:
            raise DataError(f"{path}, row {number}: malformed e-SNLI highlight row (it needs Sentence1, Sentence2, "
                            f"their highlighted word indices and a gold_label of {', '.join(NLI_LABELS)}).") from error
        mask = tuple(int(i in p_marked) for i in range(len(p_words))) + \
            tuple(int(i in h_marked) for i in range(len(h_words)))
        examples.append(Example(id=f"esnli-highlights:{row['pairID']}", text=premise, pair=hypothesis, label=label,
                                label_names=NLI_LABELS, rationale=mask, dataset="esnli-highlights",
                                extra={"explanations": [row.get("Explanation_1", "")]}))
    return examples
