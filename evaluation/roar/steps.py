"""One step of a ROAR study: the removal masks (ROAR's from the explained model, Recursive ROAR's from the model
retrained at the previous step, the anchors' none / all) and the model retrained on the masked data. Masks and
weights are cached by content (``roar_artifacts``)."""
from __future__ import annotations

import time

import numpy as np

from evaluation import targets
from evaluation.roar import artifacts as artifacts
from evaluation.roar.config import StudyConfig
from evaluation.roar.data import SPLITS, StudyData, mlm_filler
from evaluation.roar.masking import count_at, masked_batch, masked_encoding, scores_on_original, select_removed
from evaluation.roar.measures import Measure, importance_scores
from evaluation.roar.training import retrain_and_evaluate, start_model, trainable_names
from evaluation.runs.jobs import stop_requested

_IMPORTANCE: dict[str, dict] = {}  # per split the scores of every example, and "seconds"


def _targets(config: StudyConfig, data: StudyData, split: str) -> list[int | None]:
    return [targets.explain_target(config.target, label) for label in data.labels[split]]


def original_importance(config: StudyConfig, data: StudyData, measure: Measure, seed: int) -> dict:
    """Scores of every train and test example by the explained model (computed once, under a lock)."""
    key = artifacts.content_key("importance", data.key, measure.to_dict(), config.target,
                                seed if measure.is_random else None)
    if key not in _IMPORTANCE:
        with artifacts.locked(key):
            started = time.perf_counter()
            scores = {split: importance_scores(measure, data.classifier, data.encodings[split], data.ids[split],
                                               _targets(config, data, split), seed, should_stop=stop_requested)
                      for split in SPLITS}
            _IMPORTANCE[key] = {**scores, "seconds": time.perf_counter() - started}
    return _IMPORTANCE[key]


def _select(config: StudyConfig, data: StudyData, scores: dict, ratio: float, previous: dict | None) -> dict:
    out = {}
    for split in SPLITS:
        rows = []
        for i, eligible in enumerate(data.eligible[split]):
            count = count_at(int(eligible.sum()), ratio, config.count_rule)
            before = None if previous is None else previous[split][i]
            rows.append(select_removed(scores[split][i], eligible, before, count, config.rank_by))
        out[split] = rows
    return out


def static_masks(config: StudyConfig, data: StudyData, measure: Measure, ratio: float, seed: int) -> tuple[dict, dict]:
    """ROAR's removal masks at one ratio (and Recursive ROAR's first step), with how they were made."""
    key = artifacts.content_key("static", data.key, measure.to_dict(), config.target, config.rank_by,
                                config.count_rule, ratio, seed if measure.is_random else None)
    with artifacts.locked(key):
        found = artifacts.load_masks(key)
        if found is not None:
            return found[0], {**found[1], "reused": True}
        scores = original_importance(config, data, measure, seed)
        masks = _select(config, data, scores, ratio, None)
        info = {"importance_seconds": round(scores["seconds"], 3), "importance_model": "explained model"}
        artifacts.save_masks(key, masks, info)
        return masks, {**info, "reused": False}


def recursive_masks(config: StudyConfig, data: StudyData, measure: Measure, step: int, seed: int) -> tuple[dict, dict]:
    """Recursive ROAR's masks after ``step`` steps (paper 001 section 3.2): importance by the model retrained on
    the previous step's data, computed on that masked data; removed words stay removed."""
    ratios = list(config.ratios)
    if step == 1:
        return static_masks(config, data, measure, ratios[0], seed)
    key = artifacts.content_key("recursive", data.key, measure.to_dict(), config.target, config.rank_by,
                                config.count_rule, config.operator, ratios[:step], seed, config.variant.to_dict())
    with artifacts.locked(key):
        found = artifacts.load_masks(key)
        if found is not None:
            return found[0], {**found[1], "reused": True}
        previous, _ = recursive_masks(config, data, measure, step - 1, seed)
        model, _, model_key = trained(config, data, previous, seed, need_weights=True)
        retrained = data.classifier.with_model(model, fingerprint=f"roar-{model_key}",
                                               name=f"{data.classifier.name} (ROAR step {step - 1}, seed {seed})")
        filler = mlm_filler(config)
        started = time.perf_counter()
        scores: dict[str, list[np.ndarray]] = {}
        for split in SPLITS:
            scores[split] = []
            targets = _targets(config, data, split)
            for i, encoding in enumerate(data.encodings[split]):
                masked, word_map = masked_encoding(data.classifier, encoding, previous[split][i], config.operator,
                                                   filler)
                values = importance_scores(measure, retrained, [masked], [data.ids[split][i]], [targets[i]], seed,
                                           should_stop=stop_requested)[0]
                scores[split].append(scores_on_original(values, word_map, encoding.n_words))
        masks = _select(config, data, scores, ratios[step - 1], previous)
        info = {"importance_seconds": round(time.perf_counter() - started, 3),
                "importance_model": f"model retrained at step {step - 1}"}
        artifacts.save_masks(key, masks, info)
        return masks, {**info, "reused": False}


def anchor_masks(data: StudyData, ratio: float) -> dict:
    full = ratio >= 100
    return {split: [e.copy() if full else np.zeros_like(e) for e in data.eligible[split]] for split in SPLITS}


def _mask_digest(masks: dict) -> str:
    return artifacts.content_key({split: ["".join("1" if x else "0" for x in m) for m in masks[split]]
                                  for split in SPLITS})


def trained(config: StudyConfig, data: StudyData, masks: dict, seed: int, need_weights: bool = False):
    """Retrain on the masked data (or reuse the artifact); returns (model or None, metrics, key)."""
    variant = config.variant
    key = artifacts.content_key("trained", data.key, _mask_digest(masks), config.operator, variant.to_dict(), seed)
    keep_weights = need_weights or variant.trainable != "all"
    with artifacts.locked(key):
        result = artifacts.load_result(key)
        weights = artifacts.load_weights(key) if (result is not None and need_weights) else None
        if result is not None and (not need_weights or weights is not None):
            model = None
            if weights is not None:  # asked for (need_weights) and found
                model = start_model(data.classifier, variant, seed)
                model.load_state_dict(weights, strict=False)
                model.eval()
            return model, {**result, "reused": True}, key
        filler = mlm_filler(config)
        batches = {split: masked_batch(data.classifier, data.encodings[split], masks[split], config.operator, filler)
                   for split in SPLITS}
        model, metrics = retrain_and_evaluate(data.classifier, batches["train"], data.labels["train"], batches["test"],
                                              data.labels["test"], variant, seed, should_stop=stop_requested)
        artifacts.save_result(key, metrics)
        if keep_weights:
            names = set(trainable_names(model, variant))
            artifacts.save_weights(key, {k: v for k, v in model.state_dict().items() if k in names})
        return model, {**metrics, "reused": False}, key
