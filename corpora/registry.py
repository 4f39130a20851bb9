"""Dataset ids (``name:split``) -> loaders, so the app and the command line name datasets the same way."""
from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode

import settings
from corpora import file_access
from corpora.eraser import ERASER_SPLITS, load_eraser_movies
from corpora.eraser_docs import NAME as ERASER_DOCS
from corpora.eraser_docs import load_eraser_documents
from corpora.file_header import check_header
from corpora.isolated_parse import parse_in_worker
from corpora.known_feature import NAME as KNOWN_FEATURE
from corpora.known_feature import SPLITS as KNOWN_FEATURE_SPLITS
from corpora.known_feature import load_known_feature_split, parse_known_feature_id
from corpora.known_feature_long import NAME as KNOWN_FEATURE_LONG
from corpora.known_feature_long import SPLITS as LONG_SPLITS
from corpora.known_feature_long import load_known_feature_long
from corpora.mr import MR_SPLITS, load_mr
from corpora.objects import user_file_examples
from corpora.records import DataError, Example
from corpora.snli import SNLI_SPLITS, load_esnli_highlights, load_snli
from corpora.sst import SST2_SPLITS, TREE_SPLITS, load_sst2, load_sst_trees
from corpora.sst_rationale import load_sst_rationales, load_sst_rationales_p000
from corpora.user_file import Progress

COLUMN_FIELDS = ("text", "label", "pair", "rationale")  # file:PATH?text=sentence&label=gold names the columns


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
        # documents longer than a model's window
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


def with_columns(dataset_id: str, **columns: str | None) -> str:
    """``file:PATH`` with the columns that hold the texts, labels, pairs, rationales (``--text-column``
    ...): ``file:/x.csv?text=sentence&label=gold``. The mapping is part of the id, so a run and its workers read
    the same columns, and two mappings of one file are two runs."""
    given = {field: column for field, column in columns.items() if column}
    if not given:
        return dataset_id
    name, split = parse_dataset_id(dataset_id)
    if name != "file":
        raise DataError(f"Column options (--text-column, --label-column, --pair-column) name the columns of a file; "
                        f"'{dataset_id}' is a built-in dataset. Use file:PATH.")
    path, mapping = file_columns(split)
    return f"file:{path}?{urlencode({**mapping, **given})}"


def file_columns(split: str) -> tuple[str, dict[str, str]]:
    """The path and the column mapping of a ``file:`` id's rest (``/x.csv?text=sentence``)."""
    path, _, query = split.partition("?")
    mapping = dict(parse_qsl(query, keep_blank_values=False)) if query else {}
    unknown = sorted(set(mapping) - set(COLUMN_FIELDS))
    if unknown:
        raise DataError(f"Unknown column field(s) {', '.join(unknown)} in the dataset id; the fields are "
                        f"{', '.join(COLUMN_FIELDS)} (e.g. file:/x.csv?text=sentence&label=gold).")
    return path, mapping


def check_dataset_id(dataset_id: str) -> None:
    """Refuse, before any job starts, a dataset id that cannot be loaded: an unknown name or split, or a
    ``file:`` path ``file_access`` does not allow, or a file whose first row has no ``text`` column (DataError with
    the message). Reads no dataset: at most the first ``file_header.HEADER_BYTES`` of a file."""
    if not dataset_id or not dataset_id.strip():
        raise DataError("No dataset given: choose a dataset (name:split, e.g. sst2:dev) or a file.")
    name, split = parse_dataset_id(dataset_id.strip())
    if name == "file":
        path, columns = file_columns(split)
        readable = file_access.readable_file(path)
        if readable.suffix.lower() != ".parquet":  # a readable file that is no dataset stops here too
            check_header(readable, text_column=columns.get("text", "text"))
    elif name == KNOWN_FEATURE:
        parse_known_feature_id(f"{name}:{split}")
    elif split not in DATASETS[name].splits:
        raise DataError(f"Unknown split '{split}' of {name}; choose one of {', '.join(DATASETS[name].splits)}.")


@lru_cache(maxsize=32)
def _load_cached(name: str, split: str) -> tuple[Example, ...]:
    return tuple(DATASETS[name].loader(split))


# The last user files parsed, keyed by their path, size and modification time: a dataset run's cells each load
# their example (evaluation/suite/runner.py), and a file must not be parsed (in a worker process) once per cell.
# Two entries of at most EXWB_UPLOAD_ROWS rows each bound the memory this keeps.
_PARSED: OrderedDict[tuple, tuple[Example, ...]] = OrderedDict()
_PARSED_ENTRIES = 2
_PARSED_LOCK = threading.Lock()


def _user_file(path, labels: tuple[str, ...] | None, isolated: bool, progress,
               columns: dict[str, str] | None = None) -> list[Example]:
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns, labels, settings.upload_rows(),
           tuple(sorted((columns or {}).items())))
    with _PARSED_LOCK:
        if key in _PARSED:
            _PARSED.move_to_end(key)
            return list(_PARSED[key])
    if isolated:
        examples = parse_in_worker(path, labels, settings.upload_rows(), settings.parse_seconds(), settings.parse_mb(),
                                   progress, columns)
    else:
        examples = user_file_examples(path, label_names=labels, progress=progress, columns=columns)
    with _PARSED_LOCK:
        _PARSED[key] = tuple(examples)
        while len(_PARSED) > _PARSED_ENTRIES:
            _PARSED.popitem(last=False)
    return examples


def load_dataset(dataset_id: str, limit: int | None = None,
                 label_names: tuple[str, ...] | list[str] | None = None, isolated: bool | None = None,
                 progress: Progress | None = None) -> list[Example]:
    """Load ``name:split`` (e.g. ``sst2:dev``) or ``file:/path/to/data.csv``; the first ``limit`` examples.

    ``label_names``: the labels of the model the examples go to. Give them whenever a model is known: a
    user file's label names are then matched to the model's labels (``user_file.load_user_file``).
    ``isolated``: a user file is parsed in a worker process under ``EXWB_PARSE_SECONDS`` / ``EXWB_PARSE_MB``
    (``isolated_parse``), so a big or hostile file never holds this process's interpreter lock; None: in shared
    mode. ``progress(share read, rows)``: a user file's parse reports to it.
    """
    name, split = parse_dataset_id(dataset_id)
    if name == "file":
        path, columns = file_columns(split)
        readable = file_access.readable_file(path)
        names = tuple(label_names) if label_names is not None else None
        examples = _user_file(readable, names, settings.shared_mode() if isolated is None else isolated,
                              progress, columns)  # parquet too: the isolated parser reads it
    else:
        examples = list(_load_cached(name, split))
    return examples[:limit] if limit else examples
