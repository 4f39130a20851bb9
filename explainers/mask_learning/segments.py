"""Texts longer than the model reads: overlapping segments, one mask each, blended linearly (paper 002 App. A.1).

Paper 002 splits texts over 510 tokens into segments whose neighbours overlap by 100 tokens, optimizes one mask
per segment and concatenates the masks, blending the overlaps linearly. Here segments are cut at word
boundaries (a word's sub-word tokens stay together), each segment gets the input's leading and trailing
special tokens ([CLS] ... [SEP]), and in an overlap of m words the earlier segment's weight falls
m/(m+1), ..., 1/(m+1) while the later one's rises 1/(m+1), ..., m/(m+1), so the weights sum to 1.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models import Encoding, InputError


@dataclass(frozen=True)
class Segment:
    words: range  # word indices of the full input
    tokens: tuple[int, ...]  # token indices of the full input: leading specials, the words' tokens, trailing specials


def whole_input(encoding: Encoding) -> list[Segment]:
    return [Segment(range(encoding.n_words), tuple(range(encoding.n_tokens)))]


def plan_segments(encoding: Encoding, max_tokens: int, overlap_tokens: int = 100) -> list[Segment]:
    """One segment when the input fits in ``max_tokens``; else overlapping word-aligned segments."""
    if encoding.n_tokens <= max_tokens:
        return whole_input(encoding)
    if encoding.pair is not None:
        raise InputError("This sentence pair is longer than the model reads; overlapping segments work on single "
                         "texts only. Shorten the pair.")
    token_word = encoding.token_word_array
    word_positions = np.flatnonzero(token_word >= 0)
    prefix = tuple(range(int(word_positions[0]))) if word_positions.size else ()
    suffix = tuple(range(int(word_positions[-1]) + 1, encoding.n_tokens)) if word_positions.size else ()
    capacity = max_tokens - len(prefix) - len(suffix)
    if capacity < 2:
        raise InputError(f"The model reads only {max_tokens} tokens; that is too few to split this text.")
    overlap = max(0, min(int(overlap_tokens), capacity // 2))  # a word then lies in at most two segments
    tokens_of = [tuple(int(t) for t in np.flatnonzero(token_word == w)) for w in range(encoding.n_words)]
    counts = [len(t) for t in tokens_of]
    spans, start = [], 0
    while True:
        end, used = start, 0
        while end < encoding.n_words and used + counts[end] <= capacity:
            used += counts[end]
            end += 1
        end = max(end, start + 1)  # a single word longer than a segment: its tokens are cut below
        spans.append((start, end))
        if end >= encoding.n_words:
            break
        following, used = end, 0
        while following - 1 > start and used + counts[following - 1] <= overlap:
            following -= 1
            used += counts[following]
        start = following
    segments = []
    for a, e in spans:
        word_tokens = tuple(t for w in range(a, e) for t in tokens_of[w])[:capacity]
        segments.append(Segment(range(a, e), prefix + word_tokens + suffix))
    return segments


def blend_weights(segments: list[Segment]) -> list[np.ndarray]:
    """Per segment, the weight of each of its words in the blended mask (linear ramps across overlaps)."""
    weights = []
    for k, segment in enumerate(segments):
        weight = np.ones(len(segment.words))
        if k > 0:
            m = max(0, segments[k - 1].words.stop - segment.words.start)
            weight[:m] *= np.arange(1, m + 1) / (m + 1)
        if k + 1 < len(segments):
            m = max(0, segment.words.stop - segments[k + 1].words.start)
            if m:
                weight[-m:] *= np.arange(m, 0, -1) / (m + 1)
        weights.append(weight)
    return weights


def blend(segments: list[Segment], masks: list[np.ndarray], n_words: int) -> np.ndarray:
    """One value per word of the full input from the segments' masks."""
    total, weight = np.zeros(n_words), np.zeros(n_words)
    for segment, mask, w in zip(segments, masks, blend_weights(segments)):
        total[segment.words.start:segment.words.stop] += w * np.asarray(mask, dtype=np.float64)
        weight[segment.words.start:segment.words.stop] += w
    return total / np.where(weight > 0, weight, 1.0)
