"""Explanations cached by content: (model fingerprint, input, method id, parameters, target, library versions).

A randomized model has its own fingerprint, so the randomization state is part of the key too.
Two levels: an in-process LRU (shared by every Streamlit session and page) and JSON files under the
cache directory, so a restart or another process (the command line) reuses finished work.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from collections import OrderedDict
from pathlib import Path

import settings
from models import Encoding, TextClassifier
from models.runtime import library_versions

from explainers.base import Explainer
from explainers.explanation import Explanation


def cache_key(classifier: TextClassifier, encoding: Encoding, explainer: Explainer, target: int | None) -> str:
    payload = json.dumps({"model": classifier.fingerprint, "input": encoding.key, **explainer.cache_identity(),
                          "target": "predicted" if target is None else int(target),
                          "versions": library_versions()}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


FROM_SETTINGS = object()  # the directory is read from the settings at each use (tests redirect EXWB_CACHE_DIR)


class ExplanationCache:
    def __init__(self, max_items: int = 2048, directory: Path | None | object = FROM_SETTINGS):
        self.max_items = max_items
        self.directory = directory
        self._items: OrderedDict[str, Explanation] = OrderedDict()
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path | None:
        directory = _default_directory() if self.directory is FROM_SETTINGS else self.directory
        return None if directory is None else directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> Explanation | None:
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._mark(self._items[key], "memory")
        path = self._path(key)
        if path is not None and path.is_file():
            try:
                explanation = Explanation.from_dict(json.loads(path.read_text()))
            except (ValueError, KeyError, OSError):
                return None  # a damaged file is recomputed, never trusted
            self._remember(key, explanation)
            return self._mark(explanation, "disk")
        return None

    def put(self, key: str, explanation: Explanation) -> None:
        self._remember(key, explanation)
        path = self._path(key)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(json.dumps(explanation.to_dict()))
                temporary.replace(path)
            except OSError:
                pass  # a read-only or full cache directory must not break explaining

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _remember(self, key: str, explanation: Explanation) -> None:
        with self._lock:
            self._items[key] = explanation
            self._items.move_to_end(key)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    @staticmethod
    def _mark(explanation: Explanation, where: str) -> Explanation:
        return dataclasses.replace(explanation, provenance={**explanation.provenance, "cache": where})


def _default_directory() -> Path | None:
    if os.environ.get("EXWB_DISK_CACHE", "1").strip() in {"0", "false", "no", "off"}:
        return None
    return settings.cache_dir() / "explanations"


DEFAULT_CACHE = ExplanationCache()


def cached_only(explainer: Explainer, classifier: TextClassifier, encoding: Encoding, target: int | None = None,
                cache: ExplanationCache = DEFAULT_CACHE) -> Explanation | None:
    """The cached explanation, or None without computing anything."""
    return cache.get(cache_key(classifier, encoding, explainer, target))


def explain_cached(explainer: Explainer, classifier: TextClassifier, encoding: Encoding, target: int | None = None,
                   cache: ExplanationCache | None = DEFAULT_CACHE) -> Explanation:
    """``explainer.explain`` through the content cache (``cache=None`` computes afresh)."""
    if cache is None:
        return explainer.explain(classifier, encoding, target)
    key = cache_key(classifier, encoding, explainer, target)
    hit = cache.get(key)
    if hit is not None:
        return hit
    explanation = explainer.explain(classifier, encoding, target)
    cache.put(key, explanation)
    return explanation
