"""What a ROAR study costs before it starts: retrains counted, seconds estimated (the cost model of
models/metering.py, after one timed batch of the study's inputs)."""
from __future__ import annotations

import time

import numpy as np

from evaluation.roar.config import StudyConfig
from evaluation.roar.data import study_data
from evaluation.roar.measures import Measure, importance_scores
from evaluation.roar.training import HEAD_FORWARD
from models import Encoding, TextClassifier, estimate_seconds

FORWARD_FACTOR = {"head": 1.0, "last-k": 2.0, "all": 7.0}  # training cost per example and epoch, in forward passes
# (measured with bench/bench_roar.py on a CPU; the head variant on cached features needs one pass per example)


def retrain_count(config: StudyConfig) -> dict:
    measures = config.measure_list()
    n_measures = len(measures)  # with random
    ratios, seeds = len(config.ratios), len(config.seeds)
    roar = (n_measures if config.mode in ("roar", "both") else 1) * ratios * seeds
    recursive = (n_measures - 1) * ratios * seeds if config.mode in ("recursive", "both") else 0
    anchors = 2 * seeds if config.anchors else 0
    return {"roar": roar, "recursive": recursive, "anchors": anchors, "total": roar + recursive + anchors,
            "formula": f"(measures incl. random) x ratios x seeds x steps: {n_measures} x {ratios} x {seeds}"
                       + (f" + recursive {n_measures - 1} x {ratios} x {seeds}" if recursive else "")
                       + (f" + anchors 2 x {seeds}" if anchors else "")}


def measured_speed(classifier: TextClassifier, sample: list[Encoding]) -> float:
    """Tokens per second of a batched forward pass over inputs like ``sample`` on this machine now: one timed batch
    that the cost model (models/metering.py) learns from, then its rate at the sample's mean length."""
    if sample:
        classifier.predict_logits(sample)
    tokens = float(np.mean([e.n_tokens for e in sample])) if sample else 1.0
    return classifier.throughput.tokens_per_second(tokens)


def timed_importance(measure: Measure, classifier: TextClassifier, encodings: list[Encoding], ids: list[str],
                     sample: int = 3) -> float:
    """Seconds to score every sentence once, from timing the measure on a few of them (uncached)."""
    if measure.is_random or not encodings:
        return 0.0
    chosen = encodings[:sample]
    started = time.perf_counter()
    importance_scores(measure, classifier, chosen, ids[:sample], [None] * len(chosen), 0, cache=None)
    return (time.perf_counter() - started) / len(chosen) * len(encodings)


def estimate(config: StudyConfig) -> dict:
    """Retrains and rough seconds before a study starts (the cost model of models/metering.py, after one timed
    batch of the study's inputs)."""
    data = study_data(config)
    classifier = data.classifier
    counts = retrain_count(config)
    all_encodings = data.encodings["train"] + data.encodings["test"]
    tokens = float(np.mean([e.n_tokens for e in all_encodings]))
    v = config.variant
    speed = measured_speed(classifier, all_encodings[:32])
    n_train, n_test = len(data.encodings["train"]), len(data.encodings["test"])  # the sizes drawn (0 = every one)
    if v.trainable == "head" and getattr(classifier.model.config, "model_type", "") in HEAD_FORWARD:
        passes: float = n_train + n_test  # encoder features once; the head trains on them almost for free
    else:
        passes = n_train * v.epochs * FORWARD_FACTOR[v.trainable] + n_test
    per_retrain = estimate_seconds(classifier, passes, 0, tokens)
    steps = len(config.ratios) if config.mode in ("recursive", "both") else 0
    importance = {}
    for measure in config.measure_list():
        once = timed_importance(measure, classifier, all_encodings, data.ids["train"] + data.ids["test"])
        recursive = once * max(0, steps - 1) * len(config.seeds)
        importance[measure.id] = once + recursive
    total = per_retrain * counts["total"] + sum(importance.values())
    return {"retrains": counts, "seconds_per_retrain": per_retrain, "passes_per_retrain": passes,
            "examples": {"train": n_train, "test": n_test}, "importance_seconds": importance,
            "total_seconds": total, "tokens_per_example": tokens, "tokens_per_second": speed,
            "device": str(classifier.device)}
