"""The examples of a ROAR study: drawn once per configuration, encoded, their maskable words marked (cached per
process, so every cell of a study on this machine shares them)."""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from corpora import load_dataset
from corpora.records import DataError
from evaluation.roar import artifacts as artifacts
from evaluation.roar.config import StudyConfig
from evaluation.roar.masking import eligible_words
from models import Encoding, TextClassifier, cached_classifier
from models.errors import ModelError
from models.mlm import load_filler

SPLITS = ("train", "test")


@dataclass
class StudyData:
    key: str
    classifier: TextClassifier
    ids: dict[str, list[str]]
    encodings: dict[str, list[Encoding]]
    labels: dict[str, list[int]]
    eligible: dict[str, list[np.ndarray]]


def sample_examples(dataset_id: str, size: int, data_seed: int, label_names=None):
    """``size`` examples drawn with ``data_seed`` (0 = every example); ``label_names``: the model's labels (user
    files)."""
    examples = load_dataset(dataset_id, label_names=label_names)
    if not examples:
        raise DataError(f"'{dataset_id}' has no examples.")
    if 0 < size < len(examples):
        chosen = np.sort(np.random.default_rng(data_seed).choice(len(examples), size=size, replace=False))
        examples = [examples[i] for i in chosen]
    missing = sum(e.label is None for e in examples)
    if missing:
        raise DataError(f"{missing} examples of '{dataset_id}' have no gold label; ROAR retrains on gold labels.")
    return examples


def data_key(config: StudyConfig) -> str:
    v = config.variant
    return artifacts.content_key("data", config.model, config.model_fingerprint, config.train_data, config.test_data,
                                 v.train_size, v.test_size, config.data_seed, config.segments)


@lru_cache(maxsize=4)
def _study_data(key: str, config_json: str) -> StudyData:
    config = StudyConfig.from_dict(json.loads(config_json))
    classifier = cached_classifier(config.model)
    if config.model_fingerprint and classifier.fingerprint != config.model_fingerprint:
        raise ModelError(f"The model '{config.model}' here (fingerprint {classifier.fingerprint}) is not the one the "
                         f"study was made with ({config.model_fingerprint}); prepare the same model on every "
                         f"machine, or start a new study.")
    data = StudyData(key, classifier, {}, {}, {}, {})
    for split, dataset_id, size in (("train", config.train_data, config.variant.train_size),
                                    ("test", config.test_data, config.variant.test_size)):
        examples = sample_examples(dataset_id, size, config.data_seed, classifier.labels)
        data.ids[split] = [e.id for e in examples]
        data.encodings[split] = [classifier.encode(e.text, e.pair) for e in examples]
        data.labels[split] = [int(e.label) for e in examples]
        data.eligible[split] = [eligible_words(enc, config.segments) for enc in data.encodings[split]]
    if len(set(data.labels["train"])) < 2:
        raise DataError(f"The {len(data.labels['train'])} training examples drawn from '{config.train_data}' have a "
                        f"single class; use more training examples.")
    return data


def study_data(config: StudyConfig) -> StudyData:
    data_only = {"model": config.model, "model_fingerprint": config.model_fingerprint,
                 "train_data": config.train_data, "test_data": config.test_data, "segments": config.segments,
                 "data_seed": config.data_seed, "variant": config.variant.to_dict()}
    return _study_data(data_key(config), json.dumps(data_only, sort_keys=True))


def mlm_filler(config: StudyConfig):
    """The masked-LM filler of the mlm operator (ROAR-BERT), or None for the other operators."""
    if config.operator != "mlm":
        return None
    return load_filler(config.filler)  # one masked LM per process (cached in models.mlm)
