"""Shared set-up of the ROAR tests: the keyword model saved as a folder (so job cells and Ray workers load it
by path) and keyword datasets as CSV files (``file:`` dataset ids)."""
from __future__ import annotations

import csv
from pathlib import Path

from tiny_models import keyword_sentences


def save_keyword_model(classifier, folder: Path) -> Path:
    classifier.model.save_pretrained(folder)
    classifier.tokenizer.save_pretrained(folder)
    return folder


def write_keyword_csv(path: Path, n: int, seed: int) -> str:
    texts, labels = keyword_sentences(n, seed=seed)
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "label"])
        writer.writerows(zip(texts, labels))
    return f"file:{path}"


def tiny_study_kwargs(folder: Path, data: Path, **overrides) -> dict:
    from evaluation.roar.training import Variant

    kwargs = dict(model=str(folder), train_data=f"file:{data / 'train.csv'}", test_data=f"file:{data / 'test.csv'}",
                  measures=["loo", "attention"], ratios=[20, 50], seeds=[0, 1], mode="both",
                  variant=Variant(trainable="head", train_size=100, test_size=40, epochs=2, batch_size=16))
    kwargs.update(overrides)
    return kwargs
