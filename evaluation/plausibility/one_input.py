"""Plausibility of one explanation on one input: the human rationale aligned with the explained words, the two
binarized versions (top-k and threshold) and every per-example metric, ready for the page (which only draws
them) and for the command line or an export."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.plausibility.alignment import align
from evaluation.plausibility.metrics import PlausibilityConfig, example_metrics
from evaluation.plausibility.rationale_scores import binarize_threshold, binarize_top_k, top_k_size


@dataclass(frozen=True)
class ExampleScores:
    """One explanation against one rationale, over the same words (after the config's truncation rule)."""

    words: tuple[str, ...]
    segments: tuple[int, ...]  # 0 = text, 1 = pair
    human: tuple[int, ...]  # 1 = a word people marked
    scores: np.ndarray  # the explanation's word scores; NaN for words cut by truncation ("miss")
    k: int  # words in the top-k selection
    top_k: np.ndarray  # bool: the top-k words
    threshold: np.ndarray  # bool: words at or above tau after max-normalization (paper 000)
    metrics: dict[str, float]  # metric id -> value (evaluation/plausibility/metrics.py)
    human_cut: int  # human words beyond the model's length limit

    def to_dict(self) -> dict:
        return {"words": list(self.words), "scores": [float(x) for x in self.scores], "human": list(self.human),
                "top_k": self.top_k.astype(int).tolist(), "threshold": self.threshold.astype(int).tolist(),
                "metrics": dict(self.metrics)}


def score_example(encoding, word_scores, rationale, config: PlausibilityConfig = PlausibilityConfig()
                  ) -> ExampleScores:
    """Align ``word_scores`` (over ``encoding.words``) with ``rationale`` (a 0/1 mask over every word of the text,
    then the pair), binarize and score. ValueError with a readable message when they cannot be compared."""
    aligned = align(encoding, word_scores, rationale, config.truncation)
    if aligned.human.size == 0:
        raise ValueError("no words left to compare after truncation")
    metrics = example_metrics(aligned.scores, aligned.human, config, aligned.segments)
    k = top_k_size(config.top_k, aligned.human.size, int(aligned.human.sum()))
    return ExampleScores(words=tuple(aligned.words), segments=tuple(aligned.segments),
                         human=tuple(int(h) for h in aligned.human), scores=aligned.scores, k=k,
                         top_k=binarize_top_k(aligned.scores, aligned.human, k, config.sign, config.ties),
                         threshold=binarize_threshold(aligned.scores, config.tau, config.sign), metrics=metrics,
                         human_cut=aligned.human_cut)
