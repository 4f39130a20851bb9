"""ERASER movie reviews as documents longer than a model's window: ``eraser-movies-docs``.

Card. Built from the shared ERASER sentence files (``corpora/eraser.py``; the full-document release is not
available offline): the rows are grouped by ``evidence.docid``, ordered by ``start_sentence``, and each review
sentence is kept once; the rationale is the union of every evidence span of the review. **Only the sentences that
hold a human rationale are present**: a document is the rationale-bearing part of the review, in review order, not
the whole review (test: 200 documents, median ~420 words, 90th percentile ~740, max ~1,300; many exceed 512
tokens). A row's ``sentence`` may be two review sentences (evidence across a boundary); where two rows share
review sentences, the repeated leading sentences of the later row are dropped (the row's text split at its
sentence ends; when that split does not give the row's sentence count, the whole row is kept and the document's
``extra["repeated_rows"]`` counts it).
"""
from __future__ import annotations

import json

from corpora.eraser import sentence_file
from corpora.eraser_spans import evidence_mask
from corpora.locate import read_lines
from corpora.records import SENTIMENT_LABELS, DataError, Example, split_words

NAME = "eraser-movies-docs"
SENTENCE_ENDS = (".", "!", "?")


def _sentences(text: str) -> list[list[str]]:
    """The review's tokenized text cut after each sentence-final token (". ! ?" as separate tokens)."""
    out, current = [], []
    for word in split_words(text):
        current.append(word)
        if word in SENTENCE_ENDS:
            out.append(current)
            current = []
    if current:
        out.append(current)
    return out


def load_eraser_documents(split: str = "test") -> list[Example]:
    """One example per review: its rationale-holding sentences in order, the union of its rationales."""
    split = "validation" if split == "dev" else split
    path = sentence_file(split, NAME)
    documents: dict[str, dict] = {}
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            evidence = row["evidence"]
            key = (int(evidence["start_sentence"]), int(evidence["end_sentence"]), row["sentence"])
            label, docid = int(row["label"]), str(evidence["docid"])
        except (ValueError, KeyError, TypeError) as error:
            raise DataError(f"{path}, line {number}: not an ERASER row (sentence, label, evidence with docid, "
                            f"start_sentence, end_sentence).") from error
        document = documents.setdefault(docid, {"label": label, "rows": {}})
        document["rows"].setdefault(key, []).append(evidence)
    examples = []
    for index, (docid, document) in enumerate(sorted(documents.items())):
        words: list[str] = []
        mask: list[int] = []
        covered, repeated = 0, 0  # covered: review sentences already in the document
        for (start, end, sentence), evidence in sorted(document["rows"].items()):
            row_mask = list(evidence_mask(sentence, evidence))
            drop = max(0, covered - start)
            if drop:
                pieces = _sentences(sentence)
                if len(pieces) == end - start and drop < len(pieces):
                    cut = sum(len(p) for p in pieces[:drop])
                    for offset, value in enumerate(row_mask[:cut]):  # their rationale joins the copy already there
                        if value:
                            mask[len(mask) - cut + offset] = 1
                    sentence_words, row_mask = split_words(sentence)[cut:], row_mask[cut:]
                elif drop >= end - start:
                    continue  # every sentence of the row is already there (a shorter row of the same span)
                else:
                    sentence_words, repeated = split_words(sentence), repeated + 1
            else:
                sentence_words = split_words(sentence)
            words += sentence_words
            mask += row_mask
            covered = max(covered, end)
        examples.append(Example(id=f"{NAME}:{split}:{index}", text=" ".join(words), label=document["label"],
                                label_names=SENTIMENT_LABELS, rationale=tuple(mask), dataset=NAME,
                                extra={"docid": docid, "repeated_rows": repeated,
                                       "note": "only the review's rationale-holding sentences"}))
    return examples
