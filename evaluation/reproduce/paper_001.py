"""Paper 001's headline findings (shared/notes/seeds-000-001.md, s. 001 (f)): on Hooker et al.'s synthetic problem
(s. 3.3, Eq. 1, Fig. 3) Recursive ROAR equals the ground-truth ordering and ROAR is worse.

Each seed draws the problem and trains its linear models (the training seeds of this finding). On SST (Table 2,
RoBERTa column): ROAR and Recursive ROAR with gradient, x * gradient and IG, and [CLS] attention as this project's
addition (the paper has no attention measure for a transformer), each seed's classifier explained and retrained with
that seed; our number is Eq. 3's relative area against random (``roar/scores.py``), one per seed.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from evaluation.reproduce.findings import Claim, Finding
from evaluation.reproduce.seed_models import sst_model
from evaluation.reproduce.studies import roar_frame, roar_retrain_passes, roar_sentences
from evaluation.roar.presets import PRESETS
from evaluation.roar.scores import per_seed_scores
from evaluation.roar.synthetic import SyntheticProblem, synthetic_study

SIZES = {"tiny": (600, 300)}  # (train, test) points of a drawn problem; the paper's 5,000 / 2,000 otherwise
DIFFERS = "the paper's own problem (16 features, 4 informative); a logistic regression per step as the model"


def _study(spec: dict) -> tuple[dict, SyntheticProblem]:
    problem = SyntheticProblem()
    n_train, n_test = SIZES.get(spec["budget"].name, (problem.n_train, problem.n_test))
    problem = replace(problem, n_train=n_train, n_test=n_test)
    return synthetic_study([spec["seed"]], problem), problem


def recursive_equals_truth(spec: dict) -> dict:
    data, problem = _study(spec)
    gap = data["checks"][0]["per_seed"][0]
    return {"value": gap, "details": {"n_test": problem.n_test, "curves": data["curves"]}}


def roar_worse(spec: dict) -> dict:
    data, problem = _study(spec)
    gap = data["checks"][1]["per_seed"][0]
    return {"value": gap, "details": {"n_test": problem.n_test,
                                      "roar_area": float(np.mean(data["curves"]["roar"]))}}


# SST (Table 2) at the budget's sizes with paper 001's masking ([MASK], gold label, floor count, 0 / 100 % anchors)
ROAR_PRESET = {"tiny": "paper-001-quick", "quick": "paper-001-quick", "full": "paper-001"}
# the tiny budget's one-block model is near chance: its head is retrained long and fast so the curves move at all
ROAR_SIZES: dict[str, dict] = {
    "tiny": {"ratios": (30, 60), "variant": {"train_size": 48, "test_size": 16, "epochs": 30.0, "lr": 2e-2,
                                             "max_length": 32}},
    "quick": {"ratios": (20, 50, 80), "variant": {"train_size": 64, "test_size": 64}, "settings": "cheap"}}
# the quick budget shrinks the paper's protocol so it fits the quick total's 3-hour bound: 3 ratios (+ the 0 / 100 %
# anchors) instead of 9, one retrain per training seed (the seeds give the interval), 64 / 64 sentences, and IG with
# 10 steps instead of 50 (the cheap measure settings; Recursive ROAR recomputes it at every step)
ROAR_BUDGETS = ("tiny", "quick", "full")
MEASURES = {"gradient": ("Gradient", "26.1 (+1.6/-2.2)"), "ixg": ("Input x Gradient", "18.6 (+4.1/-4.6)"),
            "ig": ("IG", "32.9 (+1.8/-1.5)"), "attention": ("attention", None)}
MODES = {"recursive": "Recursive ROAR", "roar": "ROAR"}
SST_DIFFERS = ("MiniLM trained here on SST-2 (paper: RoBERTa-base fine-tuned on every sentence); a new head on the "
               "frozen encoder retrained on a subset; the budget's ratios; shrunk in the quick budget: 20 / 50 / 80 % "
               "(paper: 10-90 %), 64 training / 64 test sentences, one retrain per training seed (paper: 5), IG with "
               "10 steps (paper: 50): one test sentence moves the accuracy by 1.6 points and the 100 % floor of a "
               "retrained head sits near chance, so the area varies widely between seeds and 'partly' means a mean "
               "on the paper's side of 0 with an interval too wide to confirm it")


def relative_area(mode: str, measure: str):
    """Eq. 3's relative area of ``measure`` under ``mode`` on the seed's classifier, retrained with the seed."""
    def work(spec: dict) -> dict:
        budget = spec["budget"]
        model = sst_model(budget, spec["seed"])
        frame = roar_frame(spec, model, ROAR_PRESET[budget.name], ROAR_SIZES.get(budget.name, {}),
                           measures=tuple(MEASURES))
        areas = per_seed_scores(frame, mode, measure)
        if spec["seed"] not in areas:
            return {"skipped": "no relative area: random's curve does not fall to the 100 % floor (the retrained "
                               "models predict one class: a classifier near chance)"}
        return {"value": areas[spec["seed"]], "details": {"model": model, "ratios": sorted(set(frame["ratio"]))}}
    return work


def _sst_finding(mode: str, measure: str) -> Finding:
    name, paper = MEASURES[measure]
    if measure == "attention":
        said = ("this project's addition: Table 2 has no attention measure for RoBERTa (the BiLSTM's attention on SST: "
                "15.7 %); read as faithful when the area is > 0")
    elif mode == "recursive":
        said = f"Table 2, SST, RoBERTa, Recursive ROAR: relative area {paper} % (> 0: faithful)"
    else:
        said = (f"s. 5.2.1, Figs. 8-9: ROAR's area is > 0 for a faithful measure (Table 2's Recursive ROAR area of "
                f"{name}: {paper} %); near 0 ROAR is inconclusive")
    return Finding(f"sst-{mode}-{measure}", f"{MODES[mode]}: {name} is more faithful than random on SST", said,
                   f"relative area between {name}'s and random's {MODES[mode]} accuracy curves (Eq. 3, a fraction)",
                   Claim(sign=+1), relative_area(mode, measure), addition=measure == "attention",
                   budgets=ROAR_BUDGETS, differs=SST_DIFFERS)


NOT_COVERED = ("The other datasets of Table 2 (Anemia, Diabetes, IMDB, SNLI, bAbI) and the BiLSTM-attention column "
               "are not cells of this run; the paper's own SST sizes (9 ratios, every sentence, RoBERTa fine-tuned "
               "5 times per step) are the full budget's, for a GPU or a Ray cluster.")

FINDINGS = [
    Finding("synthetic-recursive-equals-truth", "Recursive ROAR equals the ground truth on the synthetic problem",
            "s. 3.3, Fig. 3: the Recursive ROAR curve is identical to the ground truth's (largest gap 0)",
            "largest |Recursive ROAR - ground truth| test accuracy over the removal steps",
            Claim(value=0.0, tolerance=0.01), recursive_equals_truth, differs=DIFFERS),
    Finding("synthetic-roar-worse", "ROAR is worse than Recursive ROAR on the synthetic problem",
            "s. 3.3, Fig. 3: ROAR's curve lies above Recursive ROAR's (mean accuracy gap > 0)",
            "mean test accuracy of ROAR minus Recursive ROAR over the removal steps", Claim(sign=+1), roar_worse,
            differs=DIFFERS),
] + [_sst_finding(mode, measure) for mode in MODES for measure in MEASURES]

IG_POINTS = 10  # the cheap measure settings' IG (roar/measures.py)
COSTS = {f.id: (lambda b: (0, 0)) for f in FINDINGS}  # the synthetic ones: linear models, no transformer passes


def roar_retrains(budget) -> int:
    """Retrains of one seed's study: the 0 / 100 % anchors, random at every ratio, and each measure's ROAR and
    Recursive ROAR at every ratio (Recursive ROAR's step 1 is ROAR's retrain)."""
    ratios = len(_ratios(budget))
    return 2 + ratios + len(MEASURES) * (2 * ratios - 1)


def _ratios(budget) -> tuple:
    return tuple(ROAR_SIZES.get(budget.name, {}).get("ratios", PRESETS[ROAR_PRESET[budget.name]]["ratios"]))


# Measured on the quick budget (the three seeds' studies, 2026-11-28, 2-core AMD EPYC shared with other work, 1 torch
# thread): the four measures of 128 sentences at 3 Recursive steps and 25 head retrains took 58, 53 and 52
# CPU-seconds (256, 246 and 235 s wall at a ~22 % share of a core), against 357 s from the passes below at the cost
# model's nominal rate (the measures run a sentence's passes as one batch, IG's ten points too). Counted at the
# slowest seed's rate.
ROAR_MEASURED_SPEEDUP = 6.2


def _sst_cost(budget):
    """One ROAR study per seed (the other SST findings reopen it): importance of every train and test sentence by
    each measure at every Recursive step (a forward and a backward pass each; IG one per point), and the retrains."""
    preset, sizes = ROAR_PRESET[budget.name], ROAR_SIZES.get(budget.name, {})
    importance = sum(roar_sentences(preset, sizes)) * len(_ratios(budget)) * (1 + 1 + IG_POINTS + 1)
    forward = importance + roar_retrains(budget) * roar_retrain_passes(preset, sizes)
    return forward / ROAR_MEASURED_SPEEDUP, importance / ROAR_MEASURED_SPEEDUP


COSTS["sst-recursive-gradient"] = _sst_cost


def training_sequences(budget) -> float:
    """The SST findings' seeded classifiers (paper 000's, cached by recipe: trained here when this paper runs
    first)."""
    return (budget.train_limit or 67349) * budget.epochs
