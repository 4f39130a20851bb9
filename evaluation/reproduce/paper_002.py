"""Paper 002's headline findings (shared/notes/seeds-002-004.md, Table 1 on ERASER movies): MaRC is near the best
on sufficiency and comprehensiveness (its 19-point [PAD] curves) and agrees with human rationales better than the
gradient baselines. Measured against plain gradients (Saliency), the baseline every table has.

Until the long-documents issue lands, the inputs are ERASER's movie *sentences* (``eraser-movies:validation``),
not whole reviews: said on the page. MaRC runs its paper preset (up to 900 steps, early stop).
"""
from __future__ import annotations

from evaluation.reproduce.findings import Claim, Finding
from evaluation.reproduce.seed_models import sst_model
from evaluation.reproduce.studies import evaluation_frame, mean

DATASET = "eraser-movies:validation"
MARC, SALIENCY = "marc:paper-002", "saliency"
LIMITS = {"tiny": 2, "quick": 6}  # inputs: MaRC's 900 steps per input are the cost
DIFFERS = ("ERASER movie sentences, not whole reviews (the long-documents issue); MiniLM trained here on SST-2 "
           "(paper: a BERT fine-tuned on the movie reviews)")


def _frame(spec: dict):
    budget = spec["budget"]
    model = sst_model(budget, spec["seed"])
    return evaluation_frame(spec, model, DATASET, [MARC, SALIENCY], ["paper-002", "plausibility"],
                            options={"target": "gold"}, limit=LIMITS.get(budget.name, budget.examples))


def _difference(spec: dict, metric: str) -> dict:
    frame = _frame(spec)
    marc, saliency = mean(frame, MARC, metric), mean(frame, SALIENCY, metric)
    return {"value": marc - saliency, "details": {"MaRC": marc, "Saliency": saliency, "metric": metric}}


def comprehensiveness(spec: dict) -> dict:
    return _difference(spec, "comprehensiveness-002")


def sufficiency(spec: dict) -> dict:
    return _difference(spec, "sufficiency-002")


def plausibility(spec: dict) -> dict:
    return _difference(spec, "plaus_auprc")


NOT_COVERED = ("Whole ERASER movie reviews (the long-documents issue) and the other baselines of Table 1 (Occlusion, "
               "InXGrad, IG, LIME, Shapley) are not cells of this run yet.")

FINDINGS = [
    Finding("marc-comprehensiveness", "MaRC is more comprehensive than plain gradients",
            "Table 1, movies: Comp. MaRC .518 vs Saliency_n .287 (higher is better): +0.231",
            "comprehensiveness (19 points, [PAD]) of MaRC minus Saliency's, gold label", Claim(sign=+1),
            comprehensiveness, differs=DIFFERS),
    Finding("marc-sufficiency", "MaRC is more sufficient than plain gradients",
            "Table 1, movies: Suff. MaRC .028 vs Saliency_n .132 (lower is better): -0.104",
            "sufficiency (19 points, [PAD]) of MaRC minus Saliency's, gold label", Claim(sign=-1), sufficiency,
            differs=DIFFERS),
    Finding("marc-plausibility", "MaRC agrees with human rationales better than plain gradients",
            "Table 1, movies: mAP MaRC .469 vs Saliency_n .392: +0.077",
            "AUPRC against the human rationale, MaRC minus Saliency", Claim(sign=+1), plausibility,
            differs=DIFFERS),
]

WORDS, STEPS = 22, 900
COSTS = {
    "marc-comprehensiveness": lambda b: (LIMITS.get(b.name, b.examples) * (STEPS + 2 * 19 + 1),
                                         LIMITS.get(b.name, b.examples) * (STEPS + 1)),
    "marc-sufficiency": lambda b: (0, 0),   # the same inner run, reopened
    "marc-plausibility": lambda b: (0, 0),  # the same inner run, reopened
}


def training_sequences(budget) -> float:
    return (budget.train_limit or 67349) * budget.epochs
