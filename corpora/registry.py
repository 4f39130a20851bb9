"""Dataset ids (``name:split``) -> loaders, so the app and the command line name datasets the same way."""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

from corpora import file_access
from corpora.eraser import ERASER_SPLITS, load_eraser_movies
from corpora.eraser_docs import NAME as ERASER_DOCS, load_eraser_documents
from corpora.known_feature import (NAME as KNOWN_FEATURE, SPLITS as KNOWN_FEATURE_SPLITS, load_known_feature_split,
                                   parse_known_feature_id)
from corpora.known_feature_long import NAME as KNOWN_FEATURE_LONG, SPLITS as LONG_SPLITS, load_known_feature_long
from corpora.mr import MR_SPLITS, load_mr
from corpora.records import DataError, Example
from corpora.snli import SNLI_SPLITS, load_esnli_highlights, load_snli
from corpora.sst import SST2_SPLITS, TREE_SPLITS, load_sst2, load_sst_trees
from corpora.sst_rationale import load_sst_rationales, load_sst_rationales_p000
from corpora.user_file import load_user_file


@dataclass(frozen=True)
class DatasetInfo:
    name: str
    title: str
    splits: tuple[str, ...]
    default_split: str
    task: str  # "sentiment" or "nli"
    has_rationales: bool
    loader: Callable[[str], list[Example]]


DATASETS = {
    info.name: info for info in [
        DatasetInfo("sst2", "SST-2 sentences", SST2_SPLITS, "dev", "sentiment", False, load_sst2),
        DatasetInfo("sst-trees", "SST trees (phrase sentiment)", TREE_SPLITS, "dev", "sentiment", False, load_sst_trees),
        DatasetInfo("eraser-movies", "ERASER movie sentences (human rationales)", ERASER_SPLITS, "validation",
                    "sentiment", True, load_eraser_movies),
        DatasetInfo("snli", "SNLI with e-SNLI explanations", SNLI_SPLITS, "dev", "nli", False, load_snli),
        DatasetInfo("esnli-highlights", "e-SNLI highlight sample (90 pairs)", ("train",), "train", "nli", True,
                    load_esnli_highlights),
        DatasetInfo("mr", "MR sentence polarity", MR_SPLITS, "all", "sentiment", False, load_mr),
        DatasetInfo("sst-rationales", "SST sentences, rationale = minimal agreeing phrases of the tree", TREE_SPLITS,
                    "dev", "sentiment", True, load_sst_rationales),
        DatasetInfo("sst-rationales-p000", "SST sentences, rationale = paper 000's phrase rule (approx.)", TREE_SPLITS,
                    "dev", "sentiment", True, load_sst_rationales_p000),
        DatasetInfo(KNOWN_FEATURE, "Known-feature task (paper 003): SST-2, random labels, the label word appended",
                    KNOWN_FEATURE_SPLITS, "dev", "sentiment", True, load_known_feature_split),
        # issue 32: documents longer than a model's window
        DatasetInfo(ERASER_DOCS, "ERASER movie reviews as documents (only the rationale-holding sentences)",
                    ERASER_SPLITS, "test", "sentiment", True, load_eraser_documents),
        DatasetInfo(KNOWN_FEATURE_LONG, "Known-feature task, documents of 10-40 SST-2 sentences, label word planted",
                    LONG_SPLITS, "dev", "sentiment", True, load_known_feature_long),
    ]
}


def parse_dataset_id(dataset_id: str) -> tuple[str, str]:
    name, _, split = dataset_id.partition(":")
    if name == "file":
        return name, split
    if name not in DATASETS:
        raise DataError(f"Unknown dataset '{name}'. Known: {', '.join(DATASETS)}, or file:<path.csv|.jsonl>.")
    return name, split or DATASETS[name].default_split


def check_dataset_id(dataset_id: str) -> None:
    """Refuse, before any job starts, a dataset id that cannot be loaded: an unknown name or split, or a
    ``file:`` path ``file_access`` does not allow (DataError with the message). Reads no dataset."""
    if not dataset_id or not dataset_id.strip():
        raise DataError("No dataset given: choose a dataset (name:split, e.g. sst2:dev) or a file.")
    name, split = parse_dataset_id(dataset_id.strip())
    if name == "file":
        file_access.readable_file(split)
    elif name == KNOWN_FEATURE:
        parse_known_feature_id(f"{name}:{split}")
    elif split not in DATASETS[name].splits:
        raise DataError(f"Unknown split '{split}' of {name}; choose one of {', '.join(DATASETS[name].splits)}.")


@lru_cache(maxsize=32)
def _load_cached(name: str, split: str) -> tuple[Example, ...]:
    return tuple(DATASETS[name].loader(split))


def load_dataset(dataset_id: str, limit: int | None = None,
                 label_names: tuple[str, ...] | list[str] | None = None) -> list[Example]:
    """Load ``name:split`` (e.g. ``sst2:dev``) or ``file:/path/to/data.csv``; the first ``limit`` examples.

    ``label_names``: the labels of the model the examples go to. Give them whenever a model is known: a
    user file's label names are then matched to the model's labels (``user_file.load_user_file``).
    """
    name, split = parse_dataset_id(dataset_id)
    if name == "file":
        examples = load_user_file(file_access.readable_file(split),
                                  label_names=tuple(label_names) if label_names is not None else None)
    else:
        examples = list(_load_cached(name, split))
    return examples[:limit] if limit else examples
