"""Documents longer than the model's window: a classifier over overlapping windows.

A text whose tokens do not fit in the model's window is no longer cut. It is split into overlapping windows of
whole words (a word's sub-word tokens stay together), each window framed by the input's own leading and trailing
special tokens ([CLS] ... [SEP]), and the **document's prediction is defined** from the windows' logits:

| aggregate | the document's logits                                          |
|-----------|----------------------------------------------------------------|
| mean      | the mean of the windows' logits (default)                      |
| max       | per class, the largest logit over the windows                  |
| first     | the first window's logits (what truncation computed, stated)   |

Window size and stride are in tokens, special tokens included in the size. The default is the model's own
maximum (``classifier.max_length``: 512 for BERT-style models, 8,192 for ModernBERT-style ones) with a 25 % overlap
(stride = 75 % of the words' room in a window). Paper 002 (App. A.1) used 510-token segments overlapping by 100
tokens for MaRC, which keeps its own segments (``explainers/mask_learning/segments.py``).

Removal on a document (``perturbed_document_logits``, called by the one perturbation engine ``models.perturb``):
each row removes words of the document; only the windows that hold a removed word are run again, each through the
engine on that window's own encoding, and the other windows keep the unperturbed logits (``reuse=False``
recomputes every window: the same numbers, tested).

Gradient and attention methods explain each window and blend the overlaps linearly (``blend_weights``: the rule
of paper 002 App. A.1 that MaRC's segments use).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields, replace
from functools import cached_property

import numpy as np

from models.encoding import Encoding, build_encoding
from models.errors import InputError
from models.metering import estimate_seconds

AGGREGATES = ("mean", "max", "first")
AGGREGATE_HELP = {"mean": "mean of the windows' logits", "max": "per class, the largest logit over the windows",
                  "first": "the first window's logits only (the rest of the document is not read)"}
DEFAULT_OVERLAP = 0.25  # share of a window's word room that the next window repeats
UNLIMITED = 10**9  # tokenize without truncation
# a document beyond this many words needs an explicit opt-in (``allow_long``): a cost estimate comes first
LONG_DOCUMENT_WORDS = 20_000


@dataclass(frozen=True)
class WindowConfig:
    """How a long document is read. ``size`` / ``stride`` None = the model's maximum / 25 % overlap."""

    size: int | None = None
    stride: int | None = None
    aggregate: str = "mean"

    def __post_init__(self):
        if self.aggregate not in AGGREGATES:
            raise InputError(f"Unknown window aggregate '{self.aggregate}'; choose one of {', '.join(AGGREGATES)}.")
        if self.size is not None and self.size < 4:
            raise InputError(f"A window of {self.size} tokens is too small; give at least 4 (or leave it empty for "
                             f"the model's maximum).")
        if self.stride is not None and self.stride < 1:
            raise InputError("The window stride must be at least 1 token (or empty for a 25 % overlap).")


@dataclass(frozen=True)
class Window:
    """Words ``words`` of the document, read as ``encoding`` (the document's tokens of those words + specials)."""

    words: range
    encoding: Encoding


@dataclass(frozen=True)
class DocumentEncoding(Encoding):
    """A whole document (no token cut: ``truncated_tokens`` 0) and the windows the model reads it in."""

    windows: tuple[Window, ...] = ()
    aggregate: str = "mean"
    window_size: int = 0
    window_stride: int = 0
    blend: tuple[np.ndarray, ...] = field(default=(), compare=False)

    @cached_property
    def key(self) -> str:
        """The content hash includes how the document is read (windows and aggregate decide its prediction)."""
        payload = json.dumps([self.text_key(), self.aggregate, self.window_size, self.window_stride])
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    def document_logits(self, classifier) -> np.ndarray:
        """The document's logits: the windows' logits in one batched call, aggregated (what ``logits_of`` returns)."""
        return aggregate(classifier.predict_logits([w.encoding for w in self.windows]), self.aggregate)

    def describe(self) -> dict:
        """What the provenance records about the windows."""
        return {"windows": len(self.windows), "window_tokens": self.window_size, "stride_tokens": self.window_stride,
                "aggregate": self.aggregate, "aggregate_rule": AGGREGATE_HELP[self.aggregate],
                "window_words": [[w.words.start, w.words.stop] for w in self.windows],
                "gradient_blend": "linear ramps across each overlap (paper 002 App. A.1), weights sum to 1 per word"}


def is_document(encoding: Encoding) -> bool:
    """A document read in windows, itself or under sentence / span units (``models/granularity.py``)."""
    return document_of(encoding) is not None


def document_of(encoding: Encoding) -> DocumentEncoding | None:
    """The document read in windows: the input itself or the base of its sentence / span units; None otherwise."""
    if isinstance(encoding, DocumentEncoding):
        return encoding
    base = getattr(encoding, "base", None)
    return base if isinstance(base, DocumentEncoding) else None


def aggregate(window_logits: np.ndarray, how: str) -> np.ndarray:
    """(..., windows, classes) -> (..., classes) by the document's rule."""
    if how == "mean":
        return window_logits.mean(axis=-2)
    if how == "max":
        return window_logits.max(axis=-2)
    return window_logits[..., 0, :]


def plan_windows(encoding: Encoding, size: int, stride: int | None) -> list[range]:
    """Word ranges of the windows: each holds as many whole words as fit in ``size`` tokens (specials counted); the
    next starts at the first word at least ``stride`` tokens after this one's first token."""
    token_word = encoding.token_word_array
    positions = np.flatnonzero(token_word >= 0)
    specials = encoding.n_tokens - positions.size
    room = size - specials
    if room < 2:
        raise InputError(f"A window of {size} tokens leaves no room for words after the {specials} special tokens; "
                         f"choose a larger window.")
    stride = max(1, min(room, stride if stride is not None else int(room * (1 - DEFAULT_OVERLAP))))
    counts = np.bincount(token_word[positions], minlength=encoding.n_words)
    starts = np.concatenate([[0], np.cumsum(counts)])  # token offset of each word among the word tokens
    spans, first = [], 0
    while True:
        last = first
        while last < encoding.n_words and starts[last + 1] - starts[first] <= room:
            last += 1
        last = max(last, first + 1)  # a single word longer than a window: its tokens are cut (stated in the plan)
        spans.append(range(first, last))
        if last >= encoding.n_words:
            return spans
        following = int(np.searchsorted(starts, starts[first] + stride, side="left"))
        first = min(max(following, first + 1), last)  # never skip a word, always advance


def token_positions(document: Encoding, words: range, room: int) -> np.ndarray:
    """Which of the document's tokens a window of ``words`` reads, in order: the leading specials, the words' tokens
    (at most ``room``), the trailing specials. Metrics that perturb the document's embeddings (soft sufficiency /
    comprehensiveness) slice each window's rows with it, so a token in an overlap is perturbed alike in both."""
    token_word = document.token_word_array
    inside = np.flatnonzero((token_word >= words.start) & (token_word < words.stop))[:room]
    lead = np.flatnonzero(token_word < 0)
    first_word = np.flatnonzero(token_word >= 0)[0]
    return np.concatenate([lead[lead < first_word], inside, lead[lead > first_word]]).astype(int)


def window_positions(document: DocumentEncoding, window: Window) -> np.ndarray:
    """``token_positions`` of one of the document's windows."""
    room = document.window_size - int((document.token_word_array < 0).sum())
    return token_positions(document, window.words, room)


def window_encoding(document: Encoding, words: range, room: int) -> Encoding:
    """The document's tokens of ``words`` framed by its special tokens, as an encoding of the window's text."""
    token_word = document.token_word_array
    order = token_positions(document, words, room)
    inside = order[token_word[order] >= 0]
    start, end = document.word_spans[words.start][0], document.word_spans[words.stop - 1][1]
    kept_words = sorted({int(token_word[t]) for t in inside})
    renumber = {w: i for i, w in enumerate(kept_words)}
    return Encoding(text=document.text[start:end], pair=None,
                    input_ids=tuple(document.input_ids[t] for t in order),
                    token_type_ids=tuple(document.token_type_ids[t] for t in order)
                    if document.token_type_ids is not None else None,
                    tokens=tuple(document.tokens[t] for t in order),
                    token_word=tuple(renumber[int(token_word[t])] if token_word[t] >= 0 else -1 for t in order),
                    words=tuple(document.words[w] for w in kept_words),
                    word_segment=tuple(0 for _ in kept_words),
                    word_spans=tuple((document.word_spans[w][0] - start, document.word_spans[w][1] - start)
                                     for w in kept_words),
                    n_words_total=len(kept_words), truncated_tokens=0)


def blend_weights(windows: list[range]) -> list[np.ndarray]:
    """Per window, the weight of each of its words in a blended score: in an overlap of m words the earlier
    window's weight falls m/(m+1) ... 1/(m+1) and the later one's rises 1/(m+1) ... m/(m+1) (paper 002 App. A.1,
    as MaRC's segments); where more than two windows meet, the weights are divided by their sum."""
    weights = []
    for k, words in enumerate(windows):
        weight = np.ones(len(words))
        if k > 0:
            m = max(0, windows[k - 1].stop - words.start)
            weight[:m] = np.minimum(weight[:m], np.arange(1, m + 1) / (m + 1))
        if k + 1 < len(windows):
            m = max(0, words.stop - windows[k + 1].start)
            if m:
                weight[-m:] = np.minimum(weight[-m:], np.arange(m, 0, -1) / (m + 1))
        weights.append(weight)
    total = np.zeros(max(w.stop for w in windows))
    for words, weight in zip(windows, weights):
        total[words.start:words.stop] += weight
    return [weight / total[words.start:words.stop] for words, weight in zip(windows, weights)]


def blend(document: DocumentEncoding, window_scores: list[np.ndarray]) -> np.ndarray:
    """Word scores of the document from each window's word scores (``blend_weights``)."""
    out = np.zeros(document.n_words)
    for window, weight, scores in zip(document.windows, document.blend, window_scores):
        n = min(len(window.words), len(scores))
        out[window.words.start:window.words.start + n] += weight[:n] * np.asarray(scores, dtype=np.float64)[:n]
    return out


def encode_document(classifier, text: str, pair: str | None = None, config: WindowConfig | None = None,
                    allow_long: bool = False) -> Encoding:
    """What the model reads of a text of any length: its usual encoding when it fits in one window, else a
    ``DocumentEncoding`` over overlapping windows. Never a silent cut."""
    config = config or WindowConfig()
    size = min(config.size or classifier.max_length, classifier.max_length)
    if type(classifier).encode.__qualname__ != "TextClassifier.encode":
        return classifier.encode(text, pair)  # a prompted model builds its own input around a template
    full = build_encoding(classifier.tokenizer, text, pair, UNLIMITED)
    if full.n_tokens <= size:
        return full
    if pair is not None:
        raise InputError("This sentence pair is longer than the model's window; windows work on single texts. "
                         "Shorten the pair.")
    if full.n_words > LONG_DOCUMENT_WORDS and not allow_long:
        raise InputError(long_document_message(classifier, full.n_words, full.n_tokens, size))
    spans = plan_windows(full, size, config.stride)
    room = size - (full.n_tokens - int((full.token_word_array >= 0).sum()))
    windows = tuple(Window(words, window_encoding(full, words, room)) for words in spans)
    stride = max(1, min(room, config.stride if config.stride is not None else int(room * (1 - DEFAULT_OVERLAP))))
    values = {f.name: getattr(full, f.name) for f in fields(Encoding)}
    return DocumentEncoding(**values, windows=windows, aggregate=config.aggregate, window_size=size,
                            window_stride=stride, blend=tuple(blend_weights(spans)))


def long_document_message(classifier, n_words: int, n_tokens: int, size: int) -> str:
    """The refusal of a very long document, with what one prediction and one leave-one-out would cost."""
    windows = max(1, int(np.ceil(n_tokens / (size * (1 - DEFAULT_OVERLAP)))))
    forward = estimate_seconds(classifier, windows, 0, size)
    loo = estimate_seconds(classifier, n_words * 1.4, 0, size)
    return (f"This text has {n_words:,} words ({n_tokens:,} tokens, about {windows} windows of {size} tokens). One "
            f"prediction takes about {forward:,.0f} s; word-level leave-one-out about {loo / 3600:,.1f} h. Texts over "
            f"{LONG_DOCUMENT_WORDS:,} words need an explicit opt-in (--allow-long on the command line), or use "
            f"sentence granularity or coarse to fine.")


def perturbed_document_logits(classifier, document: DocumentEncoding, keep: np.ndarray, operator, filler,
                              perturb, reuse: bool = True) -> np.ndarray:
    """Logits (n, classes) of the document with each row's removed words removed. ``perturb`` is the engine's
    ``perturb`` (passed in: the engine imports this module). Windows without a removed word keep their unperturbed
    logits when ``reuse``; the others go through the engine on their own encoding, all in one batched call."""
    keep = np.atleast_2d(np.asarray(keep, dtype=bool))
    if keep.shape[1] != document.n_words:
        raise ValueError(f"keep mask has {keep.shape[1]} columns for {document.n_words} words")
    base = classifier.predict_logits([w.encoding for w in document.windows]) if reuse else None
    if base is not None:
        window_logits = np.broadcast_to(base, (len(keep), *base.shape)).copy()
    else:
        window_logits = np.zeros((len(keep), len(document.windows), classifier.num_labels))
    batches, where = [], []
    for k, window in enumerate(document.windows):
        local = keep[:, window.words.start:window.words.stop][:, :window.encoding.n_words]
        rows = np.flatnonzero(~local.all(axis=1)) if reuse else np.arange(len(keep))
        if rows.size:
            batches.append(perturb(classifier, window.encoding, local[rows], operator, filler))
            where.append((k, rows))
    if batches:
        logits = classifier.predict_logits(_concatenate(classifier, batches))
        offset = 0
        for k, rows in where:
            window_logits[rows, k] = logits[offset:offset + rows.size]
            offset += rows.size
    return aggregate(window_logits, document.aggregate)


def _concatenate(classifier, batches):
    """One TokenBatch of several (rows of different windows go to the model together)."""
    first = batches[0]
    ids = [row for b in batches for row in b.input_ids]
    types = [row for b in batches for row in b.token_type_ids] if all(b.token_type_ids is not None
                                                                      for b in batches) else None
    zeros = None
    if any(b.zero_masks is not None for b in batches):
        zeros = [row for b in batches for row in (b.zero_masks or [[False] * len(r) for r in b.input_ids])]
    readout = None
    if any(b.readout is not None for b in batches):  # a decoder: rows without one read by the rule on their own ids
        readout = [r for b in batches for r in (b.readout or [classifier.pooled_index(input_ids=row)
                                                              for row in b.input_ids])]
    return replace(first, input_ids=ids, token_type_ids=types, zero_masks=zeros, readout=readout)
