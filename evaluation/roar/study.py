"""A ROAR / Recursive ROAR study as job cells: (measure, ratio, seed, step) -> retrained test accuracy / F1.

Method (shared/notes/seeds-000-001.md):
- ROAR (paper 001 section 3.1; paper 000 section 3.3): importance from the explained model, the top-r words of
  every train and test example removed, a fresh model retrained, its test accuracy and macro-F1 recorded.
  Cells have ``step = 0``.
- Recursive ROAR (paper 001 section 3.2, Fig. 2): step i recomputes importance with the model retrained at step
  i-1 on the data masked at step i-1, keeps removed words removed and removes up to ratio r_i in total. Cells
  have ``step = i`` (1-based; step 1 equals ROAR at r_1 and shares its artifacts).
- The random baseline is model independent, so ROAR and Recursive ROAR share it (paper 001 code); the 0 % and
  100 % models are shared by every measure ("anchor" cells). Seeds change the retrained model only.

``roar_cell(spec)`` is the work of one cell and depends only on its spec (the whole study configuration is
in it), so the local and the Ray executor give the same numbers. Artifacts (masks, weights) are cached by
content (``roar_artifacts``); importance goes through the explanation cache.
"""
from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass, field, fields, replace
from functools import lru_cache

import numpy as np

from corpora import DATASETS, load_dataset, parse_dataset_id
from corpora.records import DataError
from evaluation import targets
from evaluation.roar import artifacts as artifacts
from evaluation.roar.masking import (
    COUNT_RULES,
    RANKINGS,
    SEGMENTS,
    check_operator,
    count_at,
    eligible_words,
    masked_batch,
    masked_encoding,
    scores_on_original,
    select_removed,
)
from evaluation.roar.measures import SETTINGS, Measure, importance_scores, random_measure, resolve_measure
from evaluation.roar.training import (
    HEAD_FORWARD,
    TRAINABLE,
    Variant,
    retrain_and_evaluate,
    start_model,
    trainable_names,
)
from evaluation.runs.jobs import JOBS, Cell, Progress, RunSummary, run_cells, stop_requested
from evaluation.runs.store import ResultStore
from explainers import split_spec
from explainers.params import coerce, param, validate
from models import Encoding, TextClassifier, cached_classifier, estimate_seconds, runtime
from models.errors import ModelError, UserFacingError
from models.mlm import load_filler

KIND = "roar"
MODES = {"roar": "ROAR only", "recursive": "Recursive ROAR only", "both": "ROAR and Recursive ROAR"}
# the two choices of the one target policy (evaluation/targets.py) that make sense for retraining on every example
TARGETS = {targets.PREDICTED: "the class the model predicts (paper 000; no gold-label leakage through the explanation)",
           targets.GOLD: "the gold label (paper 001; can leak the label, see the leakage check)"}
ANCHOR = "anchor"
FULL_RATIOS = (10, 20, 30, 40, 50, 60, 70, 80, 90)


@dataclass(frozen=True)
class StudyConfig:
    model: str = "default"
    train_data: str = "sst2:train"
    test_data: str = "sst2:dev"
    measures: tuple[dict, ...] = ()  # Measure.to_dict() of each measure (random is added automatically)
    ratios: tuple[float, ...] = FULL_RATIOS  # percent of the eligible words, 0 < r < 100
    seeds: tuple[int, ...] = (0, 1, 2)
    mode: str = param("roar", "Mode", "; ".join(f"{k}: {v}" for k, v in MODES.items()), choices=tuple(MODES))
    operator: str = param("mask", "Removal operator", "mask ([MASK], paper 001), delete (paper 000), mlm (ROAR-BERT, "
                          "needs the masked LM), unk, pad")  # check_operator says why zero is not offered
    target: str = param("predicted", "Label explained", "; ".join(f"{k}: {v}" for k, v in TARGETS.items()),
                        choices=tuple(TARGETS))
    rank_by: str = param("signed", "Ranking", "; ".join(f"{k}: {v}" for k, v in RANKINGS.items()),
                         choices=tuple(RANKINGS))
    count_rule: str = param("floor", "Count rule", "; ".join(f"{k}: {v}" for k, v in COUNT_RULES.items()),
                            choices=tuple(COUNT_RULES))
    segments: str = param("first", "Segments masked", "; ".join(f"{k}: {v}" for k, v in SEGMENTS.items()),
                          choices=tuple(SEGMENTS))
    anchors: bool = param(True, "0 % and 100 % anchors", "the shared 0 % and 100 % models")
    data_seed: int = param(0, "Data seed", "which training / test subset is drawn (the same for every seed)", min=0)
    filler: str = param("mlm", "Masked LM of the mlm operator", "mlm (the prepared stand-in), a folder or a hub id")
    variant: Variant = field(default_factory=Variant)
    model_fingerprint: str = ""

    def __post_init__(self):
        problems = []
        if self.mode not in MODES:
            problems.append(f"mode must be one of {', '.join(MODES)}")
        if self.target not in TARGETS:
            problems.append(f"target must be one of {', '.join(TARGETS)}")
        if self.rank_by not in RANKINGS:
            problems.append(f"ranking must be one of {', '.join(RANKINGS)}")
        if self.count_rule not in COUNT_RULES:
            problems.append(f"count rule must be one of {', '.join(COUNT_RULES)}")
        if self.segments not in SEGMENTS:
            problems.append(f"segments must be one of {', '.join(SEGMENTS)}")
        if not self.ratios or any(not 0 < r < 100 for r in self.ratios) or list(self.ratios) != sorted(set(self.ratios)):
            problems.append("ratios must be increasing percentages strictly between 0 and 100 (0 % and 100 % are "
                            "the shared anchor models)")
        if self.count_rule == "tokens" and any(float(r) != int(r) for r in self.ratios):
            problems.append("with the 'tokens' count rule the ratios are numbers of words (1, 2, 3, ...)")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds) or any(s < 0 for s in self.seeds):
            problems.append("seeds must be distinct non-negative integers")
        if problems:
            raise UserFacingError("Invalid ROAR study: " + "; ".join(problems) + ".")
        check_operator(self.operator)
        validate(self)

    # ----- identity ------------------------------------------------------------------------------
    def measure_list(self) -> list[Measure]:
        """The study's measures followed by the random baseline (always included)."""
        chosen = [Measure.from_dict(m) for m in self.measures]
        return [m for m in chosen if not m.is_random] + [random_measure()]

    def to_dict(self) -> dict:
        data = asdict(self)
        data["measures"] = [dict(m) for m in self.measures]
        data["ratios"] = [float(r) for r in self.ratios]
        data["seeds"] = [int(s) for s in self.seeds]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> StudyConfig:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        values["variant"] = Variant.from_dict(values.get("variant"))
        values["measures"] = tuple(dict(m) for m in values.get("measures", ()))
        values["ratios"] = tuple(float(r) for r in values.get("ratios", FULL_RATIOS))
        values["seeds"] = tuple(int(s) for s in values.get("seeds", (0,)))
        return coerce(cls, values)

    def provenance(self) -> dict:
        """What every number of the study depends on, for tables and exports."""
        return {"model": self.model, "fingerprint": self.model_fingerprint, "train": self.train_data,
                "test": self.test_data, "variant": self.variant.label(),
                "operator": self.operator + (f" ({self.filler})" if self.operator == "mlm" else ""),
                "target": self.target, "ranking": self.rank_by, "count rule": self.count_rule,
                "segments": self.segments, "seeds": list(self.seeds), "mode": self.mode}

    def title(self) -> str:
        names = ", ".join(m.id for m in self.measure_list())
        return (f"{MODES[self.mode]}: {names} on {self.test_data} ({self.model}, {self.variant.trainable}, "
                f"{self.operator}, {len(self.ratios)} ratios x {len(self.seeds)} seeds)")


# A preset named after a paper runs that paper's protocol: the whole model fine-tuned from the pre-trained encoder
# on every training example, tested on the whole dev split (paper 000 s. 3.2-3.3: BERT-base, 3 epochs, Adam lr 2e-5,
# batch 32, length 128, HuggingFace's defaults otherwise; paper 001 App. C.2, Table 5: RoBERTa-base, 3 epochs, AdamW
# lr 2e-5, warm-up 0.06, weight decay 0.01, batch 16, length 512). On a CPU that is hours (the estimate says how
# many): run it as a background job, on Ray or on a GPU. The ``-quick`` presets keep each paper's masking protocol
# but retrain only a new head on the frozen encoder with 300 / 200 sentences, so they finish in minutes.
_QUICK = {"trainable": "head", "train_size": 300, "test_size": 200}
_PAPER_000_TRAINING = {"trainable": "all", "init": "base", "train_size": 0, "test_size": 0, "epochs": 3.0,
                       "lr": 2e-5, "batch_size": 32, "max_length": 128, "warmup": 0.0, "weight_decay": 0.0}
_PAPER_001_TRAINING = {"trainable": "all", "init": "base", "train_size": 0, "test_size": 0, "epochs": 3.0,
                       "lr": 2e-5, "batch_size": 16, "max_length": 512, "warmup": 0.06, "weight_decay": 0.01}
# paper 000 Table 2 compares LOOempty with IM (IM-top10), ROAR and ROARBERT; LIME against LIME-BERT is its Table A6
# (the ``paper-000-table-a6`` presets). IM and LIME-BERT fill words with the masked LM (the prepared stand-in; the
# paper's bert-base-uncased with ``--measures loo,im:paper-000-bert``).
PAPER_000_TABLE_2 = ("loo", "im")
PAPER_000_TABLE_A6 = ("lime", "lime-bert")
_PAPER_000_MASKING = {"measures": PAPER_000_TABLE_2, "ratios": (10, 20, 30), "seeds": (0, 1, 2, 3, 4), "mode": "roar",
                      "operator": "delete", "target": "predicted", "rank_by": "signed", "count_rule": "ceil",
                      "settings": "paper"}
# Paper 001 Table 2's RoBERTa column: gradient, x * gradient, IG. Its attention measure is the BiLSTM's attention
# (section 4), declined for RoBERTa ("—" in Table 2), so transformer [CLS] attention is not in the paper-001 presets;
# ``--measures gradient,ixg,ig,attention`` adds it as this project's addition.
PAPER_001_TABLE_2 = ("gradient", "ixg", "ig")
_PAPER_001_MASKING = {"measures": PAPER_001_TABLE_2, "ratios": FULL_RATIOS,
                      "seeds": (0, 1, 2, 3, 4), "mode": "both", "operator": "mask", "target": "gold",
                      "count_rule": "floor", "settings": "paper"}
# Paper 001 App. F (Fig. 7): the exact Recursive ROAR masks one token per step, up to 10 tokens ("count" strategy);
# the 0 % / 100 % anchors are not on that axis, so there is no Eq. 3 score (it needs the 100 % floor): the curves and
# the Welch tests compare the measures (evaluation/roar/scores.py).
_ONE_TOKEN = {"ratios": tuple(range(1, 11)), "count_rule": "tokens", "mode": "recursive", "anchors": False}
PRESETS = {
    "cpu-small": {"description": "the small CPU study: ROAR at 10/20/30 %, 1 seed, frozen encoder + head, "
                                 "300 training / 200 test sentences, cheap measure settings",
                  "measures": ("ig", "lime", "loo", "attention"), "ratios": (10, 20, 30), "seeds": (0,),
                  "mode": "roar", "operator": "mask", "target": "predicted", **_QUICK},
    "paper-000-quick": {"description": "quick version of paper 000 Table 2: its measures (LOOempty vs IM-top10, "
                                       "IM with the masked LM) and masking (ROAR at 10/20/30 %, words "
                                       "deleted, predicted label, signed ranking, ceil count, 5 seeds) but a new "
                                       "head on the frozen encoder, 300 training / 200 test sentences",
                        **_PAPER_000_MASKING, **_QUICK},
    "paper-000": {"description": "paper 000 Table 2 protocol: LOOempty vs IM-top10 (IM with the masked LM), "
                                 "ROAR at 10/20/30 %, words deleted, predicted label, "
                                 "signed ranking, ceil count, 5 seeds; the whole model fine-tuned from the pre-trained "
                                 "encoder on every training sentence (3 epochs, lr 2e-5, batch 32), every dev "
                                 "sentence tested: hours on a CPU",
                  **_PAPER_000_MASKING, **_PAPER_000_TRAINING},
    "paper-000-bert": {"description": "paper 000 Table 2 ROARBERT protocol: as paper-000 (LOOempty vs IM-top10) but "
                                      "removed words replaced by the "
                                      "masked LM's top-1 word (needs the MLM filler); the whole model fine-tuned on "
                                      "every training sentence: hours on a CPU",
                       **_PAPER_000_MASKING, "operator": "mlm", **_PAPER_000_TRAINING},
    "paper-000-table-a6": {"description": "paper 000 Table A6 protocol: LIME vs LIME-BERT (1,000 samples, the masked "
                                          "LM fills LIME-BERT's removed words) under ROAR with paper-000's masking "
                                          "(--operator mlm: its ROARBERT columns); the whole model fine-tuned on "
                                          "every training sentence: hours on a CPU",
                           **_PAPER_000_MASKING, "measures": PAPER_000_TABLE_A6, **_PAPER_000_TRAINING},
    "paper-000-table-a6-quick": {"description": "quick version of paper 000 Table A6: LIME vs LIME-BERT with "
                                                "paper-000's masking but a new head on the frozen encoder, 300 / 200 "
                                                "sentences",
                                 **_PAPER_000_MASKING, "measures": PAPER_000_TABLE_A6, **_QUICK},
    "paper-000-bert-quick": {"description": "quick version of paper 000 Table 2 ROARBERT: as paper-000-quick (LOOempty "
                                            "vs IM-top10) but removed words "
                                            "replaced by the masked LM's top-1 word (needs the MLM filler)",
                             **_PAPER_000_MASKING, "operator": "mlm", **_QUICK},
    "paper-001-quick": {"description": "quick version of paper 001: its masking (ROAR and Recursive ROAR, [MASK] at "
                                       "10-90 % + 0/100 % anchors, gold label, floor count, 5 seeds, gradient / x * "
                                       "gradient / IG as Table 2's RoBERTa column) but a new head on the frozen "
                                       "encoder, 300 / 200 sentences",
                        **_PAPER_001_MASKING, **_QUICK},
    "paper-001": {"description": "paper 001 protocol: gradient, x * gradient and IG (Table 2's RoBERTa column: "
                                 "the paper has no attention measure for a transformer; add one with --measures "
                                 "gradient,ixg,ig,attention as this project's addition), ROAR and Recursive ROAR, "
                                 "[MASK] at 10-90 % (+ 0/100 % anchors), gold label, floor count, 5 seeds; the "
                                 "whole model fine-tuned from the "
                                 "pre-trained encoder on every training example (3 epochs, AdamW lr 2e-5, warm-up "
                                 "0.06, batch 16), every test example: hours on a CPU",
                  **_PAPER_001_MASKING, **_PAPER_001_TRAINING},
    "paper-001-one-token": {"description": "paper 001 App. F protocol: Recursive ROAR removing exactly one word "
                                           "per step (1..10 words, importance recomputed by the previous step's "
                                           "model), [MASK], gold label, 5 seeds; the whole model fine-tuned as "
                                           "paper-001 at every step: hours on a CPU",
                            **_PAPER_001_MASKING, **_ONE_TOKEN, **_PAPER_001_TRAINING},
    "paper-001-one-token-quick": {"description": "quick version of paper 001 App. F: its one-word steps and masking "
                                                 "but a new head on the frozen encoder, 300 / 200 sentences",
                                  **_PAPER_001_MASKING, **_ONE_TOKEN, **_QUICK},
}


def default_seeds() -> tuple[int, ...]:
    """3 seeds on a CPU, 5 on a GPU (the issue's defaults)."""

    return (0, 1, 2, 3, 4) if runtime.choose_device().type == "cuda" else (0, 1, 2)


def build_config(model: str = "default", dataset: str | None = "sst2", train_data: str | None = None,
                 test_data: str | None = None, measures=("ig", "lime", "loo", "attention"), ratios=None, seeds=None,
                 mode: str = "roar", operator: str = "mask", target: str = "predicted", rank_by: str = "signed",
                 count_rule: str = "floor", segments: str = "first", anchors: bool = True, settings: str = "cheap",
                 measure_params: dict | None = None, variant: Variant | None = None, data_seed: int = 0,
                 filler: str = "mlm", check_model: bool = True) -> StudyConfig:
    """A validated configuration; the model is loaded to record its fingerprint (so a changed model is a new
    study) and the datasets are checked to exist."""
    if train_data is None or test_data is None:
        name, _ = parse_dataset_id(dataset or "sst2")

        splits = DATASETS[name].splits if name in DATASETS else ()
        train_data = train_data or (f"{name}:train" if "train" in splits else None)
        test_data = test_data or (f"{name}:dev" if "dev" in splits else f"{name}:validation" if "validation" in splits
                                  else f"{name}:test" if "test" in splits else None)
        if train_data is None or test_data is None:
            raise DataError(f"Dataset '{dataset}' has no train and dev/test split; give --train-data and --test-data.")
    if settings not in SETTINGS:
        raise UserFacingError(f"Unknown measure settings '{settings}'; use {', '.join(SETTINGS)}.")
    resolved = [resolve_measure(m, settings, (measure_params or {}).get(split_spec(m)[0]))
                for m in measures if m.strip()]
    seen, unique = set(), []
    for measure in resolved:
        if measure.id not in seen and not measure.is_random:
            seen.add(measure.id)
            unique.append(measure)
    ratios = tuple(sorted({float(r) for r in (ratios if ratios is not None else FULL_RATIOS)} - {0.0, 100.0}))
    config = StudyConfig(model=model, train_data=train_data, test_data=test_data,
                         measures=tuple(m.to_dict() for m in unique), ratios=ratios,
                         seeds=tuple(seeds) if seeds is not None else default_seeds(), mode=mode, operator=operator,
                         target=target, rank_by=rank_by, count_rule=count_rule, segments=segments, anchors=anchors,
                         data_seed=data_seed, filler=filler, variant=variant or Variant())
    if check_model:
        config = replace(config, model_fingerprint=cached_classifier(model).fingerprint)
        study_data(config)  # loads and checks the data now (clear errors before any job starts)
        _filler(config)  # the mlm operator: is the masked LM there?
        for measure in unique:  # IM, LIME-BERT: is their masked LM there? (a clear error now, not in every cell)
            explainer = measure.explainer()
            if explainer.needs_mlm:
                explainer.filler()
    return config


# ----- data ---------------------------------------------------------------------------------------------
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


def _filler(config: StudyConfig):
    """The masked-LM filler of the mlm operator (ROAR-BERT), or None for the other operators."""
    if config.operator != "mlm":
        return None
    return load_filler(config.filler)  # one masked LM per process (cached in models.mlm)


SPLITS = ("train", "test")


# ----- masks ---------------------------------------------------------------------------------------------
_IMPORTANCE: dict[str, dict[str, list[np.ndarray]]] = {}


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
        filler = _filler(config)
        started = time.perf_counter()
        scores = {}
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
            if need_weights:
                model = start_model(data.classifier, variant, seed)
                model.load_state_dict(weights, strict=False)
                model.eval()
            return model, {**result, "reused": True}, key
        filler = _filler(config)
        batches = {split: masked_batch(data.classifier, data.encodings[split], masks[split], config.operator, filler)
                   for split in SPLITS}
        model, metrics = retrain_and_evaluate(data.classifier, batches["train"], data.labels["train"], batches["test"],
                                              data.labels["test"], variant, seed, should_stop=stop_requested)
        artifacts.save_result(key, metrics)
        if keep_weights:
            names = set(trainable_names(model, variant))
            artifacts.save_weights(key, {k: v for k, v in model.state_dict().items() if k in names})
        return model, {**metrics, "reused": False}, key


def _masked_share(data: StudyData, masks: dict) -> dict:
    out = {}
    for split in SPLITS:
        removed = sum(int(m.sum()) for m in masks[split])
        eligible = sum(int(e.sum()) for e in data.eligible[split])
        out[split] = removed / eligible if eligible else 0.0
    return out


def _preview(data: StudyData, masks: dict, n: int = 3) -> list[dict]:
    return [{"words": list(data.encodings["test"][i].words), "removed": [bool(x) for x in masks["test"][i]]}
            for i in range(min(n, len(data.encodings["test"])))]


# ----- cells -----------------------------------------------------------------------------------------------
def cell_key(measure: str, ratio: float, seed: int, step: int) -> str:
    return f"{measure}|{ratio:g}|{seed}|{step}"


def study_cells(config: StudyConfig) -> list[Cell]:
    """Every cell, in an order that computes each measure's importance once and each recursive chain in order."""
    base = config.to_dict()
    cells = []

    def add(kind: str, measure: Measure | None, ratio: float, seed: int, step: int):
        name = ANCHOR if measure is None else measure.id
        spec = {"config": base, "kind": kind, "measure": None if measure is None else measure.to_dict(),
                "ratio": float(ratio), "seed": int(seed), "step": int(step)}
        cells.append(Cell(cell_key(name, ratio, seed, step), spec))

    if config.anchors:
        for seed in config.seeds:
            add(ANCHOR, None, 0.0, seed, 0)
            add(ANCHOR, None, 100.0, seed, 0)
    for measure in config.measure_list():
        for seed in config.seeds:
            if config.mode in ("roar", "both") or measure.is_random:
                for ratio in config.ratios:
                    add("roar", measure, ratio, seed, 0)
            if config.mode in ("recursive", "both") and not measure.is_random:
                for step, ratio in enumerate(config.ratios, start=1):
                    add("recursive", measure, ratio, seed, step)
    return cells


def roar_cell(spec: dict) -> dict:
    """The work of one cell (runs in this process or on a Ray worker; depends only on ``spec``)."""

    config = StudyConfig.from_dict(spec["config"])
    data = study_data(config)
    seed, ratio, step, kind = int(spec["seed"]), float(spec["ratio"]), int(spec["step"]), spec["kind"]
    measure = Measure.from_dict(spec["measure"]) if spec.get("measure") else None
    started = time.perf_counter()
    if kind == ANCHOR:
        masks, info = anchor_masks(data, ratio), {"importance_seconds": 0.0, "reused": False}
    elif kind == "recursive":
        masks, info = recursive_masks(config, data, measure, step, seed)
    else:
        masks, info = static_masks(config, data, measure, ratio, seed)
    masking_seconds = time.perf_counter() - started
    _, metrics, _ = trained(config, data, masks, seed)
    return {
        "kind": kind, "measure": ANCHOR if measure is None else measure.id,
        "method": None if measure is None else measure.method,
        "measure_label": ("no measure (0 % / 100 % anchor)" if measure is None else measure.label()),
        "ratio": ratio, "seed": seed, "step": step,
        "accuracy": metrics["accuracy"], "macro_f1": metrics["macro_f1"],
        "masked_share": _masked_share(data, masks), "n_train": metrics["n_train"], "n_test": metrics["n_test"],
        "predicted_share": metrics.get("predicted_share"),
        "variant": config.variant.label(), "trainable": config.variant.trainable, "operator": config.operator,
        "target": config.target, "importance_model": info.get("importance_model", "none"),
        "importance_seconds": info.get("importance_seconds", 0.0), "masking_seconds": round(masking_seconds, 3),
        "train_seconds": metrics.get("train_seconds"), "eval_seconds": metrics.get("eval_seconds"),
        "masks_reused": bool(info.get("reused")), "retrain_reused": bool(metrics.get("reused")),
        "train_record": metrics.get("train_record"), "device": str(runtime.choose_device()),
        "worker": {"host": platform.node(), "pid": os.getpid()},
        "examples": _preview(data, masks),
    }


# ----- cost ---------------------------------------------------------------------------------------------------
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
        passes = n_train + n_test  # encoder features once; the head trains on them almost for free
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


# ----- runs -----------------------------------------------------------------------------------------------------
def prepare_study(config: StudyConfig, store: ResultStore | None = None,
                  estimated_seconds: float | None = None) -> tuple[ResultStore, str, list[Cell]]:
    """Create (or find, to resume) the study's run and its cells, without running anything; ``estimated_seconds``
    (from ``estimate``) gives the time left before the first cell finishes."""
    store = store or ResultStore()
    cells = study_cells(config)
    meta = {"provenance": config.provenance(), "retrains": retrain_count(config)}
    if estimated_seconds is not None and cells:
        meta["estimated_cell_seconds"] = estimated_seconds / len(cells)
    run_id = store.create_run(KIND, config.to_dict(), total=len(cells), title=config.title(), meta=meta)
    return store, run_id, cells


def cells_of_run(store: ResultStore, run_id: str) -> tuple[StudyConfig, list[Cell]]:
    """The configuration and cells of a stored study (to resume it after a restart)."""
    run = store.get_run(run_id)
    if run is None or run["kind"] != KIND:
        raise UserFacingError(f"No ROAR study '{run_id}' in {store.path}.")
    config = StudyConfig.from_dict(run["config"])
    return config, study_cells(config)


def run_study(config: StudyConfig, store: ResultStore | None = None, executor: str = "local",
              progress: Progress | None = None, should_stop=None, ray_address: str | None = None,
              ray_resources: dict | None = None) -> tuple[ResultStore, RunSummary]:
    store, run_id, cells = prepare_study(config, store)
    summary = run_cells(store, run_id, cells, roar_cell, executor=executor, progress=progress, should_stop=should_stop,
                        ray_address=ray_address, ray_resources=ray_resources)
    return store, summary


def start_study(config: StudyConfig, store: ResultStore, executor: str = "local", ray_address: str | None = None,
                ray_resources: dict | None = None, estimated_seconds: float | None = None) -> str:
    """Start (or resume) a study in a background thread; returns the run id at once."""
    store, run_id, cells = prepare_study(config, store, estimated_seconds)
    JOBS.start(store, run_id, cells, roar_cell, executor=executor, ray_address=ray_address,
               ray_resources=ray_resources)
    return run_id


__all__ = ["ANCHOR", "FULL_RATIOS", "KIND", "MODES", "PRESETS", "StudyConfig", "TARGETS", "TRAINABLE", "Variant",
           "build_config", "cells_of_run", "estimate", "prepare_study", "retrain_count", "roar_cell", "run_study",
           "start_study", "study_cells", "study_data"]
