"""Cached loaders for the app: one classifier object per model, shared by every session and page."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict

import streamlit as st

from corpora import load_dataset
from models import BUILT_IN, TextClassifier, load_classifier
from models.prepare import RECIPES, find_prepared, prepare


@st.cache_resource(show_spinner="Loading the model ...", max_entries=4)
def classifier(spec: str) -> TextClassifier:
    return load_classifier(spec)


@st.cache_resource(show_spinner=False, max_entries=4)
def fast_classifier(spec: str) -> TextClassifier:
    """The opt-in fast view of ``classifier(spec)``: the same weights under reduced-precision autocast,
    with its own fingerprint, so cached explanations never cross precisions."""
    return classifier(spec).fast_variant()


# Parsed datasets are shared by every session: at most DATASET_ENTRIES of them, each dropped DATASET_TTL seconds
# after it was loaded, so an upload's rows leave memory after its users are gone (measured: one 49.5 MB CSV and
# one 100k-row file took a server from 1.0 to 2.6 GB). A dataset asked for again is read again from disk.
DATASET_ENTRIES = 8
DATASET_TTL = 30 * 60
_FILES: OrderedDict[tuple, tuple[float, list]] = OrderedDict()  # (dataset id, labels) -> (loaded at, examples)
_FILES_LOCK = threading.Lock()


@st.cache_data(show_spinner="Loading the dataset ...", max_entries=DATASET_ENTRIES, ttl=DATASET_TTL)
def _built_in(dataset_id: str, label_names: tuple[str, ...] | None = None):
    return load_dataset(dataset_id, label_names=label_names)


def _user_file(dataset_id: str, label_names: tuple[str, ...] | None):
    """A user file, parsed in a worker process (``corpora.isolated_parse``: a time and a memory limit, never this
    server's interpreter lock) with a progress bar; kept like the built-in datasets (at most DATASET_ENTRIES,
    each DATASET_TTL seconds)."""
    key, now = (dataset_id, label_names), time.monotonic()
    with _FILES_LOCK:
        for old in [k for k, (loaded, _) in _FILES.items() if now - loaded > DATASET_TTL]:
            del _FILES[old]
        hit = _FILES.get(key)
    if hit is not None:
        return list(hit[1])
    bar = st.progress(0.0, text="Reading the file (in a worker process) ...")

    def progress(share: float, rows: int) -> None:
        bar.progress(min(1.0, share), text=f"Reading the file: {rows:,} rows ...")

    try:
        examples = load_dataset(dataset_id, label_names=label_names, isolated=True, progress=progress)
    finally:
        bar.empty()
    with _FILES_LOCK:
        _FILES[key] = (now, examples)
        while len(_FILES) > DATASET_ENTRIES:
            _FILES.popitem(last=False)
    return list(examples)


def dataset(dataset_id: str, label_names: tuple[str, ...] | None = None):
    """``label_names``: the model's labels (a user file's label names are matched to them). A ``file:`` path is
    read only when ``corpora.file_access`` allows it, in a worker process."""
    if dataset_id.startswith("file:"):
        return _user_file(dataset_id, tuple(label_names) if label_names is not None else None)
    return _built_in(dataset_id, label_names)


def is_prepared(spec: str) -> bool:
    return spec not in BUILT_IN or find_prepared(spec) is not None


def prepare_with_progress(spec: str) -> None:
    """Build a built-in model inside the page, with a progress bar and a stop button."""
    recipe = RECIPES[spec]
    bar = st.progress(0.0, text=f"Preparing '{spec}': {recipe.description} ...")

    def progress(step: int, total: int, info: dict) -> None:
        left = info["seconds"] / step * (total - step)
        bar.progress(step / total, text=f"Preparing '{spec}': step {step}/{total}, loss {info['loss']:.3f}, "
                                        f"about {left / 60:.1f} min left")

    prepare(spec, progress=progress, log=lambda message: None)
    bar.progress(1.0, text=f"'{spec}' is ready.")
    classifier.clear()
