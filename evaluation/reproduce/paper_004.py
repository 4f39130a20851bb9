"""Paper 004's headline findings (shared/notes/seeds-002-004.md, Tables 1-2): AML's attribution model, selected on
one faithfulness metric, is best on that metric: tuned for comprehensiveness it beats the sufficiency-tuned model on
comprehensiveness, and the other way round; pAML explains in one pass of its model (its speed beside
leave-one-out's); fAML (s. 3.1: a few steps of G on the input itself) beats pAML on the metric both are tuned
for. IG, LIME and leave-one-out are scored beside them on each seed (in the details).

Each seed trains the classifier and both attribution models (the budget shrinks AML's recipe); the metrics are the
paper's @20 % comprehensiveness and sufficiency (``comprehensiveness-004``, ``sufficiency-004``).
"""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from corpora import load_dataset
from evaluation.faithfulness.curves import evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from evaluation.reproduce.findings import Claim, Finding
from evaluation.reproduce.seed_models import sst_model
from evaluation.runs.jobs import CellStopped, stop_requested
from explainers import create, create_from_spec
from explainers.mask_learning.aml_training import AMLRecipe, prepare_aml
from models import cached_classifier

COMP, SUFF = "comprehensiveness-004", "sufficiency-004"
TUNES = ("comprehensiveness", "sufficiency")
BASELINES = ("integrated_gradients", "lime", "leave_one_out")
DIFFERS = ("MiniLM trained here on SST-2 (paper: DistilBERT, BERT, RoBERTa); AML's recipe shrunk by the budget; "
           "the first SST-2 dev sentences")


def _scores(spec: dict, faml: bool = False) -> dict:
    """Per method (AML under each tuning, the baselines; with ``faml`` fAML tuned for comprehensiveness too): mean
    comp and suff and seconds per explanation."""
    budget = spec["budget"]
    model = sst_model(budget, spec["seed"])
    classifier = cached_classifier(model)
    inputs = [(e.text, e.pair) for e in load_dataset("sst2:train")[: (budget.train_limit or 67349)]]
    for tune in TUNES:
        recipe = replace(AMLRecipe(tune=tune, seed=spec["seed"]), **budget.aml_budget)
        prepare_aml(classifier, inputs, recipe, data_id="sst2:train", should_stop=stop_requested, log=lambda _: None)
    explainers = {f"aml:{tune}": create("aml", preset="pAML", tuned_for=tune) for tune in TUNES}
    explainers.update({m: create_from_spec(m) for m in BASELINES if m != "lime"})
    explainers["lime"] = create("lime", n_samples=budget.samples)
    if faml:
        explainers["faml:comprehensiveness"] = create("aml", preset="fAML", tuned_for="comprehensiveness")
    metrics = [BY_ID[COMP], BY_ID[SUFF]]
    values: dict[str, dict[str, list[float]]] = {name: {COMP: [], SUFF: [], "seconds": []} for name in explainers}
    for example in load_dataset("sst2:dev", limit=budget.examples):
        if stop_requested():
            raise CellStopped()
        encoding = classifier.encode(example.text)
        for name, explainer in explainers.items():
            started = time.perf_counter()
            explanation = explainer.explain(classifier, encoding)
            values[name]["seconds"].append(time.perf_counter() - started)
            result = evaluate_scores(classifier, encoding, metrics, explanation.word_scores, {"seed": spec["seed"]})
            for metric in (COMP, SUFF):
                values[name][metric].append(result.values[metric])
    return {name: {k: float(np.mean(v)) for k, v in parts.items()} for name, parts in values.items()}


def comp_tuned_wins_comp(spec: dict) -> dict:
    scores = _scores(spec)
    return {"value": scores["aml:comprehensiveness"][COMP] - scores["aml:sufficiency"][COMP], "details": scores}


def suff_tuned_wins_suff(spec: dict) -> dict:
    scores = _scores(spec)
    return {"value": scores["aml:sufficiency"][SUFF] - scores["aml:comprehensiveness"][SUFF], "details": scores}


def paml_speed(spec: dict) -> dict:
    scores = _scores(spec)
    ratio = scores["leave_one_out"]["seconds"] / max(scores["aml:comprehensiveness"]["seconds"], 1e-9)
    return {"value": float(np.log10(ratio)),
            "details": {"pAML seconds": scores["aml:comprehensiveness"]["seconds"],
                        "leave-one-out seconds": scores["leave_one_out"]["seconds"]}}


def faml_beats_paml(spec: dict) -> dict:
    scores = _scores(spec, faml=True)
    return {"value": scores["faml:comprehensiveness"][COMP] - scores["aml:comprehensiveness"][COMP],
            "details": {name: scores[name] for name in ("faml:comprehensiveness", "aml:comprehensiveness")}}


NOT_COVERED = ("The paper's other baselines (GXI, DeepLift, GradientShap) are not cells of this run yet.")

FINDINGS = [
    Finding("aml-comp-tuned-wins-comp", "AML tuned for comprehensiveness is the more comprehensive",
            "Tables 1-2: AML selected on a metric is best on it (A-C column); here comp-tuned minus suff-tuned > 0",
            "comprehensiveness @20 % of pAML tuned for comprehensiveness minus pAML tuned for sufficiency",
            Claim(sign=+1), comp_tuned_wins_comp, differs=DIFFERS),
    Finding("aml-suff-tuned-wins-suff", "AML tuned for sufficiency is the more sufficient",
            "Tables 1-2: AML selected on a metric is best on it (A-S column); here suff-tuned minus comp-tuned < 0",
            "sufficiency @20 % (lower is better) of pAML tuned for sufficiency minus pAML tuned for comprehensiveness",
            Claim(sign=-1), suff_tuned_wins_suff, differs=DIFFERS),
    Finding("paml-faster-than-loo", "pAML explains faster than leave-one-out",
            "s. 3-4: pAML needs one pass of its attribution model per explanation (no per-input optimization)",
            "log10(leave-one-out seconds / pAML seconds) per explanation (> 0: pAML faster); wall time, machine "
            "shared", Claim(sign=+1), paml_speed, differs=DIFFERS),
    Finding("faml-beats-paml", "fAML is more comprehensive than pAML, both tuned for comprehensiveness",
            "Table 1, SST2, Comp: fAML 0.576 / 0.638 / 0.467 vs pAML 0.235 / 0.350 / 0.240 (RoBERTa / DistilBERT / "
            "BERT): fAML - pAML = +0.34 / +0.29 / +0.23",
            "comprehensiveness @20 % of fAML (5 steps on the input) minus pAML, both tuned for comprehensiveness",
            Claim(sign=+1), faml_beats_paml, differs=DIFFERS),
]

WORDS = 20
COSTS = {
    "aml-comp-tuned-wins-comp": lambda b: (b.examples * (2 + 50 + b.samples + WORDS + 8 * 2), b.examples * 50),
    "aml-suff-tuned-wins-suff": lambda b: (0, 0),   # the same explanations, served from the cache
    "paml-faster-than-loo": lambda b: (0, 0),
    "faml-beats-paml": lambda b: (b.examples * (5 + 5 * 2), b.examples * 5),  # 5 steps of G and the classifier
}


def training_sequences(budget) -> float:
    aml = budget.aml_budget or {"train_size": 800, "validation_size": 200, "epochs": 5}
    # the classifier, then two attribution models (G and the classifier, each step forward and backward)
    return (budget.train_limit or 67349) * budget.epochs + 2 * 2 * aml["train_size"] * aml["epochs"]
