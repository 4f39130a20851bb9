"""Shared set-up of the report-card tests: keyword sentences as a CSV whose rationale (and known feature) is the
keyword, the only word the tiny keyword model reads."""
from __future__ import annotations

import csv
import json

from tiny_models import KEYWORD, keyword_sentences


def write_rationale_csv(path, n: int, seed: int) -> str:
    texts, labels = keyword_sentences(n, seed=seed)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label", "rationale"])
        for text, label in zip(texts, labels):
            writer.writerow([text, label, json.dumps([i for i, w in enumerate(text.split()) if w == KEYWORD])])
    return f"file:{path}"
