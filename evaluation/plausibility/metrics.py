"""Plausibility: agreement of an explanation with human rationales (agreement with people, NOT faithfulness).

Every metric compares one explanation's word scores with a 0/1 human word mask of the same example.
A plausible explanation highlights what people highlight; that says nothing about what the model uses
(paper 003 s. 4.1.3: "this has no bearing on faithfulness"; paper 004 A.1).

Definitions (citations in the metric records below):
- Binarizing at a threshold follows paper 000 s. 3.3 / 5.2 and its code (seeds-000-001.md 000.3(e)):
  zero the negative scores, divide by the maximum (all zeros when the maximum is <= 0), keep
  ``a_i >= tau``. Binarizing at top-k keeps the k best-ranked words *that have a positive score*: under
  ``sign="positive"`` a negative (or zero) score is "not highlighted" in both binarizations, so top-k
  selects fewer than k words when fewer are positive. Rankings (AUPRC, precision@k, mean rank) order every
  word, negatives after all positives. Edge conventions: IoU = 1 when both sets are empty; precision = 1 when H and A are both
  empty, 0 when only H is empty and 0 when A is empty; recall = 1 when H is empty, 0 when A is empty.
  The same conventions are used for every set-based metric here, so no metric is ever undefined.
- Token precision / recall / F1 at top-k follow ERASER / paper 002 s. 4.2 (per example, then averaged);
  AML's top-25 (paper 004 App. A.1) is the ``aml-top25`` preset.
- IoU F1 follows ERASER as coded in paper 002 (seeds-002-004.md 002.4): contiguous spans of the
  binarized explanation and of the human mask; a predicted span matches when its best IoU against a human
  span is >= 0.5; precision = matches / predicted spans, recall = matches / human spans, F1 per example.
- AUPRC is the average precision of the scores against the human mask (sklearn's step formula, ties
  grouped), per example, then averaged (paper 002's "mAP"). Undefined (NaN, left out of means) without
  human words.
- ERASER's official scoring script (rationale_benchmark/metrics.py) reports two of these differently, and
  both are offered under names that say so: its "AUPRC" is the trapezoid area under sklearn's
  precision-recall curve (``auc(recall, precision)``, ``plaus_auprc_trapezoid``), and its dataset IoU F1 is
  the F1 of the *averaged* span precision and recall (``iou_f1_of_means`` over ``plaus_iou_precision`` /
  ``plaus_iou_recall``; the precision is averaged over examples with a highlighted span, the recall over
  examples with a human span, as the script's macro average does) where ``plaus_iou_f1`` averages the
  per-example F1. Its token F1 is the per-example F1 averaged, as ``plaus_token_f1_topk``.
- Precision@k with k = number of human words ("ground truth overlap" as coded in paper 003 s. 2.2.3.1) and
  the mean rank (smallest r such that the top-r words hold every human word) and its share of the input
  (paper 003's "mean rank percentage", over words here, not tokens). NaN without human words.
- Coverage: the share of words the thresholded explanation highlights, next to the human coverage
  (paper 000 App. A).

Ranking ties are broken pessimistically by default (non-human words first), so a method gets no credit
for a tie (a constant explanation ranks every human word last); ``ties="reading-order"`` breaks them by
position. Words cut by truncation are left out (``truncation="drop"``; their human words are counted in
``plaus_human_cut``) or counted as never highlighted (``truncation="miss"``).

This file holds the settings, the per-example metric sets and the evaluators; the building blocks are in
``rationale_scores.py``, the alignment of a rationale with the explained words in ``alignment.py``.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from evaluation.metric import Evaluator, Metric, register_evaluator, register_metric
from evaluation.plausibility.alignment import align
from evaluation.plausibility.rationale_scores import (
    TAUS,
    auprc_trapezoid,
    average_precision,
    binarize_threshold,
    binarize_top_k,
    iou_f1,
    iou_span_scores,
    parse_top_k,
    rank_scores,
    set_scores,
    sweep,
    top_k_size,
)
from explainers.params import coerce, param, validate

FAMILY = "plausibility"
LABEL = "plausibility (agreement with people), not faithfulness"

SIGNS = ("positive", "absolute")
TIES = ("pessimistic", "reading-order")
TRUNCATION = ("drop", "miss")
IOU_FROM = ("top-k", "threshold")
SELECT_BY = ("f1", "iou")
BINARIZATIONS = ("top-k", "top-p")


@dataclass(frozen=True)
class PlausibilityConfig:
    """Settings of the plausibility metrics (every number reports the preset and these values)."""

    top_k: str = param("20%", "Top-k", "a share of the words ('20%', ceil, at least 1), a count ('25') or 'human' "
                       "(= the number of human words)")
    tau: float = param(0.5, "Threshold tau", "threshold on the max-normalized scores (paper 000 binarization), "
                       "in (0, 1]", min=0.0, max=1.0, step=0.05)
    sign: str = param("positive", "Sign", "positive: negatives never highlighted, ranked last (paper 000); absolute: |score|",
                      choices=SIGNS)
    ties: str = param("pessimistic", "Ties", "pessimistic: non-human words first among equal scores; "
                      "reading-order: by position", choices=TIES)
    iou_threshold: float = param(0.5, "IoU span match", "ERASER: a predicted span matches a human span at this IoU",
                                 min=0.0, max=1.0, step=0.05)
    iou_from: str = param("top-k", "IoU spans from", "which binarization the IoU F1 spans come from",
                          choices=IOU_FROM)
    truncation: str = param("drop", "Words cut by truncation", "drop: left out; miss: counted as never "
                            "highlighted", choices=TRUNCATION)
    only_correct: bool = param(False, "Correct predictions only", "paper 000 code: only correctly predicted "
                               "examples")
    select_by: str = param("f1", "Best tau by", "dataset level: the best tau of the sweep maximizes this",
                           choices=SELECT_BY)
    binarization: str = param("top-k", "Dataset binarization", "top-k: the top-k words of each example; top-p: "
                              "paper 002's per-document share p, predicted by a leave-one-out kernel regression "
                              "over the run's documents (dataset runs; replaces the top-k token scores)",
                              choices=BINARIZATIONS)

    def __post_init__(self):
        validate(self)
        if not 0 < float(self.tau) <= 1:
            raise ValueError(f"plausibility tau must be in (0, 1], got {self.tau}.")
        if not 0 < float(self.iou_threshold) <= 1:
            raise ValueError(f"plausibility iou_threshold must be in (0, 1], got {self.iou_threshold}.")
        parse_top_k(self.top_k)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


PRESETS: dict[str, dict] = {
    "default": {},
    # paper 000 s. 3.3 / 5.2 + code: correctly predicted examples, negatives zeroed, tau 0.05 = the optimal tau of
    # LOO-empty and IM on SST-2 (the sweep reports every tau)
    "paper000": {"only_correct": True, "sign": "positive", "tau": 0.05, "iou_from": "threshold"},
    # paper 004 App. A.1 (AML Table 3): F1 over the top 25 tokens
    "aml-top25": {"top_k": "25"},
    # paper 003 s. 2.2.3.1: k = number of human words (the "ground truth overlap" setting)
    "gt-length": {"top_k": "human", "ties": "reading-order"},
    # paper 002 baselines "_n": L1 norm (unsigned); rank by magnitude
    "marc-abs": {"sign": "absolute"},
    # paper 002 s. 4.2 / App. A.1: token P / R / F1 of the per-document top-p % (evaluation/plausibility/top_p.py)
    "paper002-top-p": {"binarization": "top-p"},
}


def make_config(preset: str | None = None, **overrides) -> PlausibilityConfig:
    """A preset's settings with ``overrides`` (None = keep; strings from the command line are converted)."""
    values = {}
    if preset:
        if preset not in PRESETS:
            raise ValueError(f"Unknown plausibility preset '{preset}'; presets: {', '.join(PRESETS)}.")
        values.update(PRESETS[preset])
    values.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(values) - {f.name for f in dataclasses.fields(PlausibilityConfig)}
    if unknown:
        raise ValueError(f"Unknown plausibility setting(s) {', '.join(sorted(unknown))}.")
    return coerce(PlausibilityConfig, values)


def config_from_options(options: dict | None) -> tuple[PlausibilityConfig, str | None]:
    """The config from run options: ``options["plausibility"]`` is a preset name or ``{"preset": .., key: ..}``;
    flat ``plausibility_<key>`` options (e.g. from the command line) override it."""
    options = options or {}
    raw = options.get("plausibility") or {}
    if isinstance(raw, str):
        raw = {"preset": raw}
    raw = dict(raw)
    for key, value in options.items():
        if key.startswith("plausibility_"):
            raw[key[len("plausibility_"):]] = value
    preset = raw.pop("preset", None)
    return make_config(preset, **raw), preset


# ----- one example ------------------------------------------------------------------------------------------
def example_metrics(scores, human, config: PlausibilityConfig = PlausibilityConfig(),
                    segments=None) -> dict[str, float]:
    """Every per-example plausibility metric (ids as registered below) for aligned scores and human mask."""
    scores = np.asarray(scores, dtype=np.float64)
    h = np.asarray(human, dtype=bool)
    if scores.shape != h.shape:
        raise ValueError(f"{scores.size} scores but {h.size} human mask entries: they must cover the same words.")
    if h.size == 0:
        raise ValueError("no words to compare: the input has no words after truncation")
    n = h.size
    k = top_k_size(config.top_k, n, int(h.sum()))
    top = binarize_top_k(scores, h, k, config.sign, config.ties)
    thresholded = binarize_threshold(scores, config.tau, config.sign)
    at_k, at_tau = set_scores(top, h), set_scores(thresholded, h)
    spans_from = top if config.iou_from == "top-k" else thresholded
    ranks = rank_scores(scores, h, config.sign, config.ties)
    span = iou_span_scores(spans_from, h, config.iou_threshold, segments)
    return {
        "plaus_token_precision_topk": at_k["precision"], "plaus_token_recall_topk": at_k["recall"],
        "plaus_token_f1_topk": at_k["f1"],
        "plaus_token_precision_tau": at_tau["precision"], "plaus_token_recall_tau": at_tau["recall"],
        "plaus_token_f1_tau": at_tau["f1"], "plaus_iou_tau": at_tau["iou"],
        "plaus_iou_f1": iou_f1(spans_from, h, config.iou_threshold, segments)["f1"],
        "plaus_iou_precision": span["precision"], "plaus_iou_recall": span["recall"],
        "plaus_auprc": average_precision(scores, h, config.sign),
        "plaus_auprc_trapezoid": auprc_trapezoid(scores, h, config.sign),
        "plaus_precision_at_k": ranks["precision_at_k"], "plaus_mean_rank": ranks["mean_rank"],
        "plaus_mean_rank_pct": ranks["mean_rank_pct"],
        "plaus_coverage": float(thresholded.mean()), "plaus_human_coverage": float(h.mean()),
    }


def sweep_metrics(scores, human, config: PlausibilityConfig = PlausibilityConfig()) -> dict[str, float]:
    """The sweep flattened to metric ids ``p000_<quantity>@<tau>`` (for the dataset-level protocol)."""
    result = sweep(scores, human, config.sign)
    return {sweep_id(quantity, tau): float(result[quantity][i])
            for quantity in ("iou", "precision", "recall", "coverage") for i, tau in enumerate(TAUS)}


def sweep_id(quantity: str, tau: float) -> str:
    return f"p000_{quantity}@{tau:.2f}"


def parse_sweep_id(metric_id: str) -> tuple[str, float] | None:
    if not metric_id.startswith("p000_") or "@" not in metric_id:
        return None
    quantity, _, tau = metric_id[len("p000_"):].partition("@")
    return quantity, float(tau)


# ----- metric records and the evaluators -----------------------------------------------------------------------
P000 = "paper 000 (Nguyen-style IM/LOO study) s. 3.3 and 5.2; code conventions in seeds-000-001.md 000.3(e)"
ERASER = "ERASER (DeYoung et al. 2020) as used by paper 002 s. 4.2 / App. A.1 (seeds-002-004.md 002.4)"
ERASER_SCRIPT = "ERASER's official rationale_benchmark/metrics.py (jayded/eraserbenchmark): partial_match_score " \
                "macro P / R, _auprc"
P002 = "paper 002 s. 4.2 / App. A.1: per-document top-p % from a leave-one-out kernel regression (top_p.py)"
P003 = "paper 003 s. 2.2.3.1 and 4.1.3 (ground-truth overlap as coded = precision@k; mean rank; seed-003.md 3.1)"


def _metric(id, label, higher, description, reference, rng=(0.0, 1.0), data_property=False):
    return Metric(id=id, label=label, family=FAMILY, higher_is_better=higher, range=rng,
                  description=f"{description} Plausibility (agreement with people), not faithfulness.",
                  reference=reference, params={"data_property": True} if data_property else {})


METRIC_RECORDS = (
    _metric("plaus_token_precision_topk", "Token precision @ top-k", True,
            "Share of the top-k words (k from the config) that people marked.", ERASER),
    _metric("plaus_token_recall_topk", "Token recall @ top-k", True,
            "Share of the human words among the top-k words.", ERASER),
    _metric("plaus_token_f1_topk", "Token F1 @ top-k", True,
            "Per-example F1 of the top-k words against the human words, then averaged.",
            ERASER + "; paper 004 App. A.1"),
    _metric("plaus_token_precision_tau", "Token precision @ tau", True,
            "Precision of the words whose max-normalized positive score is >= tau.", P000),
    _metric("plaus_token_recall_tau", "Token recall @ tau", True,
            "Recall of the words whose max-normalized positive score is >= tau.", P000),
    _metric("plaus_token_f1_tau", "Token F1 @ tau (per example)", True,
            "Per-example F1 at tau (paper 000 reports F1 of the averaged P and R: see the dataset table).", P000),
    _metric("plaus_iou_tau", "IoU @ tau", True, "|A and H| / |A or H| for the words at or above tau.", P000),
    _metric("plaus_iou_f1", "IoU F1 (spans, IoU >= 0.5; mean of per-example F1)", True,
            "F1 of span matches per example, then averaged: a highlighted span matches a human span at IoU >= "
            "0.5.", ERASER),
    _metric("plaus_iou_precision", "IoU span precision (ERASER script)", True,
            "Matched highlighted spans / highlighted spans (IoU >= 0.5), per example; examples without a "
            "highlighted span are left out, as ERASER's script does. Its dataset IoU F1 is the F1 of this mean "
            "and the mean span recall (the ERASER table).", ERASER_SCRIPT),
    _metric("plaus_iou_recall", "IoU span recall (ERASER script)", True,
            "Matched highlighted spans / human spans (IoU >= 0.5), per example; examples without a human span "
            "are left out.", ERASER_SCRIPT),
    _metric("plaus_auprc_trapezoid", "AUPRC (trapezoid, ERASER script)", True,
            "Trapezoid area under the precision-recall curve (sklearn auc(recall, precision)), per example, "
            "averaged: what ERASER's script reports as AUPRC (not average precision).", ERASER_SCRIPT),
    _metric("plaus_auprc", "AUPRC (average precision)", True,
            "Average precision of the scores against the human mask, per example, averaged (mAP).", ERASER),
    _metric("plaus_precision_at_k", "Precision@k (k = human words)", True,
            "Share of the top-|H| words that are human words (ground-truth overlap as coded).", P003),
    _metric("plaus_mean_rank", "Mean rank of the human words", False,
            "Smallest r such that the top-r words hold every human word.", P003, (1.0, None)),
    _metric("plaus_mean_rank_pct", "Mean rank % of the human words", False,
            "The mean rank divided by the number of words.", P003),
    _metric("plaus_coverage", "Coverage @ tau", False,
            "Share of words highlighted at tau (compare with the human coverage; neither direction is better, "
            "shown with 'lower' only so a method highlighting everything does not look good).",
            "paper 000 App. A"),
    _metric("plaus_human_coverage", "Human coverage", False, "Share of words people marked (a property of the data).",
            "paper 000 App. A", data_property=True),
    _metric("plaus_human_cut", "Human words cut by truncation", False,
            "Human words beyond the model's length limit; the explanation could not cover them.",
            "this project", (0.0, None), data_property=True),
)

# paper 002's top-p token scores: fitted over a run's documents, so the dataset report computes them
# (evaluation/plausibility/dataset.py) in place of the top-k ones when ``binarization="top-p"``
TOP_P_RECORDS = tuple(
    register_metric(_metric(f"plaus_token_{q}_topp", f"Token {name} @ top-p", True, what, P002))
    for q, name, what in (("precision", "precision", "Share of the document's top-p words that people marked."),
                          ("recall", "recall", "Share of the human words among the document's top-p words."),
                          ("f1", "F1", "Per-document F1 of the top-p words against the human words, then averaged.")))
TOP_K_TO_TOP_P = {f"plaus_token_{q}_topk": f"plaus_token_{q}_topp" for q in ("precision", "recall", "f1")}

SWEEP_RECORDS = tuple(
    _metric(f"p000_{q}", f"Paper 000 sweep: {name} per tau", True,
            f"{name} at each tau = 0.05 .. 0.95 (metric ids p000_{q}@<tau>); the dataset table takes the best tau.",
            P000) for q, name in (("iou", "IoU"), ("precision", "precision"), ("recall", "recall"),
                                  ("coverage", "coverage")))


def _prediction(classifier, encoding, explanation) -> int:
    """The model's predicted class (from the explanation when it explains the prediction; else one forward,
    remembered, since the random baseline calls the evaluator once per draw)."""
    if explanation.provenance.get("target", {}).get("how") == "predicted":
        return int(explanation.target)
    return int(np.argmax(classifier.logits_of(encoding)))


def _aligned_for(classifier, encoding, explanation, example, options):
    config, _preset = config_from_options(options)
    if example is None or example.rationale is None:
        return None, config
    if config.only_correct and example.label is not None \
            and _prediction(classifier, encoding, explanation) != example.label:
        return None, config
    return align(encoding, explanation.word_scores, example.rationale, config.truncation), config


def compute_plausibility(classifier, encoding, explanation, example, options) -> dict[str, float]:
    aligned, config = _aligned_for(classifier, encoding, explanation, example, options)
    if aligned is None or aligned.human.size == 0:
        return {}
    values = example_metrics(aligned.scores, aligned.human, config, aligned.segments)
    values["plaus_human_cut"] = float(aligned.human_cut)
    return values


def compute_sweep(classifier, encoding, explanation, example, options) -> dict[str, float]:
    aligned, config = _aligned_for(classifier, encoding, explanation, example, options)
    if aligned is None or aligned.human.size == 0:
        return {}
    return sweep_metrics(aligned.scores, aligned.human, config)


PLAUSIBILITY = register_evaluator(Evaluator(
    id="plausibility", label=LABEL, metrics=METRIC_RECORDS, compute=compute_plausibility, needs_rationale=True))
PLAUSIBILITY_SWEEP = register_evaluator(Evaluator(
    id="plausibility-sweep", label=f"Paper 000 threshold sweep: {LABEL}", metrics=SWEEP_RECORDS,
    compute=compute_sweep, needs_rationale=True))
