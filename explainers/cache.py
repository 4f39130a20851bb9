"""Explanations cached by content: (model fingerprint, input, method id, parameters, target, library versions).

A randomized model has its own fingerprint, so the randomization state is part of the key too.
Two levels: an in-process LRU (shared by every Streamlit session and page) and JSON files under the
cache directory, so a restart or another process (the command line) reuses finished work.

Nothing is served unchecked: an entry from either level must be an explanation of the very input, model,
method and target it is asked for (words, tokens, one score per word and per token, finite scores). A damaged
or foreign entry is dropped from both levels and logged; the caller recomputes it and ``put`` replaces it.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

import settings
from explainers.base import Explainer
from explainers.explanation import Explanation
from models import Encoding, TextClassifier
from models.runtime import library_versions

log = logging.getLogger(__name__)


def cache_key(classifier: TextClassifier, encoding: Encoding, explainer: Explainer, target: int | None) -> str:
    payload = json.dumps({"model": classifier.fingerprint, "input": encoding.key, **explainer.cache_identity(),
                          **explainer.cache_salt(classifier),
                          "target": "predicted" if target is None else int(target),
                          "versions": library_versions()}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def is_partial(explanation: Explanation) -> bool:
    """A run stopped half-way (MaRC's Stop keeps its last mask): shown with its note, never cached, because the
    same request run to the end gives another answer."""
    details = explanation.provenance.get("details") if isinstance(explanation.provenance, dict) else None
    return isinstance(details, dict) and details.get("stop_reason") == "stopped"


@dataclass(frozen=True)
class Request:
    """What a cached explanation must be an explanation of."""

    fingerprint: str
    encoding: Encoding
    method_id: str
    target: int | None  # None: the predicted class, whichever it is
    num_labels: int | None = None

    @classmethod
    def of(cls, classifier: TextClassifier, encoding: Encoding, explainer: Explainer,
           target: int | None) -> Request:
        return cls(classifier.fingerprint, encoding, explainer.id, target, classifier.num_labels)


def problem_with(explanation: Explanation, request: Request | None = None) -> str | None:
    """Why ``explanation`` cannot be served (for ``request``, when given), or None when it can."""
    n_words, n_tokens = len(explanation.words), len(explanation.tokens)
    if explanation.word_scores.shape != (n_words,):
        return f"{explanation.word_scores.size} word scores for {n_words} words"
    if explanation.token_scores is not None and explanation.token_scores.shape != (n_tokens,):
        return f"{explanation.token_scores.size} token scores for {n_tokens} tokens"
    if len(explanation.token_word) != n_tokens or len(explanation.word_segment) != n_words:
        return "the token-to-word map or the word segments do not match the tokens and words"
    if not np.isfinite(explanation.word_scores).all() or (
            explanation.token_scores is not None and not np.isfinite(explanation.token_scores).all()):
        return "scores that are not finite numbers"
    if not isinstance(explanation.provenance, dict):
        return "no provenance record"
    texts = (explanation.method_id, explanation.method_label, explanation.family, explanation.target_label,
             *explanation.words, *explanation.tokens, *explanation.warnings)
    if not all(isinstance(text, str) for text in texts):
        return "labels, words or warnings that are not text"
    if not isinstance(explanation.target, (int, np.integer)) or isinstance(explanation.target, bool):
        return f"a target that is not a class index ({explanation.target!r})"
    if request is None:
        return None
    if is_partial(explanation):
        return "a run stopped half-way (its mask is not the method's answer)"
    encoding = request.encoding
    if explanation.method_id != request.method_id:
        return f"an explanation by '{explanation.method_id}', not '{request.method_id}'"
    if explanation.words != encoding.words or explanation.word_segment != encoding.word_segment:
        return "the words of another input"
    if explanation.tokens != encoding.tokens or explanation.token_word != encoding.token_word:
        return "the tokens of another input"
    model = explanation.provenance.get("model")
    fingerprint = model.get("fingerprint") if isinstance(model, dict) else None
    if fingerprint != request.fingerprint:
        return f"an explanation of another model (fingerprint {fingerprint!r}, not {request.fingerprint!r})"
    source = explanation.provenance.get("input")
    if not isinstance(source, dict) or source.get("key") != encoding.key:
        return "the provenance of another input"
    if request.num_labels is not None and not 0 <= explanation.target < request.num_labels:
        return f"class {explanation.target}, which the model does not have"
    if request.target is not None and explanation.target != request.target:
        return f"an explanation of class {explanation.target}, not {request.target}"
    return None


def _parse(text: str) -> Explanation:
    """An Explanation from a cache file's text; ValueError for anything that is not one."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"a JSON {type(data).__name__}, not an explanation record")
    try:
        return Explanation.from_dict(data)
    except (KeyError, TypeError, AttributeError) as error:
        raise ValueError(f"not an explanation record ({type(error).__name__}: {error})") from error


class _Directory(enum.Enum):
    FROM_SETTINGS = "from settings"  # read from the settings at each use (tests redirect EXWB_CACHE_DIR)


FROM_SETTINGS = _Directory.FROM_SETTINGS


class ExplanationCache:
    def __init__(self, max_items: int = 2048,
                 directory: Path | None | Literal[_Directory.FROM_SETTINGS] = FROM_SETTINGS):
        self.max_items = max_items
        self.directory = directory
        self._items: OrderedDict[str, Explanation] = OrderedDict()
        self._lock = threading.Lock()
        self.rejected = 0  # entries dropped as damaged or foreign since start (shown in diagnostics, tested)

    def _path(self, key: str) -> Path | None:
        directory = _default_directory() if self.directory is FROM_SETTINGS else self.directory
        return None if directory is None else directory / key[:2] / f"{key}.json"

    def get(self, key: str, request: Request | None = None) -> Explanation | None:
        """The entry under ``key`` if it checks out (against ``request`` when given), else None."""
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
        if hit is not None:
            problem = problem_with(hit, request)
            if problem is None:
                return self._mark(hit, "memory")
            self._reject(key, "memory", problem, seen=hit)
            return None
        path = self._path(key)
        if path is None or not path.is_file():
            return None
        seen = None
        try:
            seen = _identity(path)
            explanation = _parse(path.read_text())
        except (ValueError, OSError) as error:  # invalid JSON, a list, a record with fields missing, ...
            self._reject(key, "disk", str(error), seen=seen)
            return None
        problem = problem_with(explanation, request)
        if problem is not None:
            self._reject(key, "disk", problem, seen=seen)
            return None
        self._remember(key, explanation)
        return self._mark(explanation, "disk")

    def put(self, key: str, explanation: Explanation) -> None:
        self._remember(key, explanation)
        path = self._path(key)
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                temporary = path.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
                temporary.write_text(json.dumps(explanation.to_dict()))
                with self._lock:  # a rejection in another thread sees either the old file or this one, whole
                    temporary.replace(path)
            except OSError:
                pass  # a read-only or full cache directory must not break explaining

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def _reject(self, key: str, where: str, problem: str, seen=None) -> None:
        """Forget a bad entry, so it is recomputed (and replaced by ``put``), never served. Only what was read is
        dropped: a good entry another thread stored meanwhile (the page and a background job can look up the same
        key at once) stays, in memory and on disk."""
        path = self._path(key) if where == "disk" else None
        with self._lock:
            self.rejected += 1
            if where == "memory" and self._items.get(key) is seen:
                self._items.pop(key, None)
            if path is not None and seen is not None and _identity(path, missing_ok=True) == seen:
                try:
                    path.unlink(missing_ok=True)
                except OSError:
                    pass  # read-only: the recomputed entry is served from memory, the file stays unused
        log.warning("cached explanation %s (%s) dropped and recomputed: %s", key[:12], where, problem)

    def _remember(self, key: str, explanation: Explanation) -> None:
        with self._lock:
            self._items[key] = explanation
            self._items.move_to_end(key)
            while len(self._items) > self.max_items:
                self._items.popitem(last=False)

    @staticmethod
    def _mark(explanation: Explanation, where: str) -> Explanation:
        return dataclasses.replace(explanation, provenance={**explanation.provenance, "cache": where})


def _identity(path: Path, missing_ok: bool = False) -> tuple[int, int, int] | None:
    """Which file is at ``path`` (inode, size, modification time): ``put`` replaces a file by renaming a new one
    over it, so a rejected file that was replaced meanwhile has another identity and is not removed."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        if missing_ok:
            return None
        raise
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _default_directory() -> Path | None:
    if not settings.disk_cache_enabled():
        return None
    return settings.cache_dir() / "explanations"


DEFAULT_CACHE = ExplanationCache()


def cached_only(explainer: Explainer, classifier: TextClassifier, encoding: Encoding, target: int | None = None,
                cache: ExplanationCache = DEFAULT_CACHE) -> Explanation | None:
    """The cached explanation, checked against this input, model, method and target; None without computing."""
    return cache.get(cache_key(classifier, encoding, explainer, target),
                     Request.of(classifier, encoding, explainer, target))


def explain_cached(explainer: Explainer, classifier: TextClassifier, encoding: Encoding, target: int | None = None,
                   cache: ExplanationCache | None = DEFAULT_CACHE, key: str | None = None,
                   finish: Callable[[Explanation], Explanation] | None = None) -> Explanation:
    """``explainer.explain`` through the content cache (``cache=None`` computes afresh); a cached entry that does
    not check out is recomputed and replaced; a stopped run (``is_partial``) is returned but not stored. ``key``:
    the cache key when the caller has it already (a page's plan); ``finish``: applied to a fresh explanation before
    it is stored (``shared_passes.explain_member`` records the shared pass)."""
    def computed() -> Explanation:
        explanation = explainer.explain(classifier, encoding, target)
        return explanation if finish is None else finish(explanation)

    if cache is None:
        return computed()
    key = cache_key(classifier, encoding, explainer, target) if key is None else key
    hit = cache.get(key, Request.of(classifier, encoding, explainer, target))
    if hit is not None:
        return hit
    explanation = computed()
    if not is_partial(explanation):
        cache.put(key, explanation)
    return explanation
