"""Datasets for the library: a built-in id (``"sst2:dev"``), a user file, or Python objects (``corpora/objects.py``)."""
from __future__ import annotations

from typing import Any

from corpora import Example, load_dataset
from corpora.objects import examples_from
from models import TextClassifier


def dataset(source: Any, text_column: str = "text", label_column: str | None = "label",
            pair_column: str | None = "pair", rationale_column: str | None = "rationale",
            model: TextClassifier | None = None, limit: int | None = None) -> list[Example]:
    """Examples from a dataset id (``"sst2:dev"``, ``"file:/path.csv"``), a list of texts or dicts, a pandas
    DataFrame, a Hugging Face ``datasets.Dataset`` or a ``.parquet`` path; ``model``'s labels give label names
    their class index. ``limit``: the first n examples."""
    if isinstance(source, str) and not source.endswith(".parquet"):
        examples = load_dataset(source)
    else:
        examples = examples_from(source, text_column, label_column, pair_column, rationale_column,
                                 label_names=tuple(model.labels) if model is not None else None)
    return examples[:limit] if limit is not None else examples
