"""Placing ERASER evidence spans on the words of their sentence, with repeated phrases disambiguated.

``corpora/eraser.py`` places each evidence text at its first character match in the sentence. That is
wrong for the few rows whose evidence occurs more than once (13 of 18,122 rows in the shared copy), e.g.
validation row 404: evidence "cliche" is matched inside "cliches" instead of the later word "cliche", and
train rows 1697/1702 ("and , and" twice in one sentence, two different spans) both land on the first.

Each row also carries the evidence's document token index (``start_token``); within one review the
sentence's first word sits at a fixed document offset, so ``start_token - word position`` is the same for
every evidence of that review. This module matches evidence at *word* boundaries, picks the offset that
explains the most evidence rows of the same document, and places ambiguous evidence with it.
"""
from __future__ import annotations

from collections import Counter

from corpora.records import mask_from_spans, split_words


def _candidates(words: list[str], evidence: list[str]) -> list[int]:
    k = len(evidence)
    return [i for i in range(len(words) - k + 1) if k and words[i:i + k] == evidence]


def evidence_mask(sentence: str, evidence: list[dict]) -> tuple[int, ...]:
    """Word mask of ``sentence``: the union of the evidence rows (``{"text", "start_token", "docid"}``)."""
    words = split_words(sentence)
    mask = [0] * len(words)
    by_doc: dict[object, list[dict]] = {}
    for row in evidence:
        by_doc.setdefault(row.get("docid"), []).append(row)
    for rows in by_doc.values():
        placed = [(row, _candidates(words, split_words(row["text"]))) for row in rows]
        offsets: Counter[int] = Counter()
        for row, candidates in placed:
            if row.get("start_token") is not None:
                offsets.update({int(row["start_token"]) - c for c in candidates})
        offset = offsets.most_common(1)[0][0] if offsets else None
        for row, candidates in placed:
            if not candidates:  # evidence that does not start/end at word boundaries: character match
                start = sentence.find(row["text"])
                if start >= 0:
                    extra = mask_from_spans(sentence, [(start, start + len(row["text"]))])
                    mask = [a | b for a, b in zip(mask, extra)]
                continue
            position = candidates[0]
            if offset is not None and row.get("start_token") is not None \
                    and int(row["start_token"]) - offset in candidates:
                position = int(row["start_token"]) - offset
            for index in range(position, position + len(split_words(row["text"]))):
                mask[index] = 1
    return tuple(mask)
