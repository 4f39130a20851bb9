"""Micro F1 beside macro F1 (paper 004 Table 3, "Macro and Micro F1 over the top 25 tokens"; seeds-002-004.md
004.4): macro is the mean of each document's token F1 (``plaus_token_f1_topk``), micro the F1 of the token decisions
pooled over every document (true positives, selected and human words summed first), so long documents weigh more.

Both are computed from the run's stored word scores with the evaluator's own alignment and top-k binarization
(``binarize_top_k``: the config's k, sign and tie rule); 95 % bootstrap intervals resample documents.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from evaluation.plausibility.metrics import PlausibilityConfig
from evaluation.plausibility.rationale_scores import binarize_top_k, f1, set_scores, top_k_size

SOURCE = "paper 004 Table 3 (macro and micro F1 of the top-25 tokens on ERASER Movie Reviews; the aml-top25 preset)"


def micro_scores(selections: list[np.ndarray], humans: list[np.ndarray]) -> dict[str, float]:
    """Pooled precision, recall and F1 over documents (0 where nothing is selected / no human word)."""
    tp = sum(int(np.sum(np.asarray(s, bool) & np.asarray(h, bool))) for s, h in zip(selections, humans))
    selected = sum(int(np.sum(s)) for s in selections)
    human = sum(int(np.sum(h)) for h in humans)
    precision = tp / selected if selected else 0.0
    recall = tp / human if human else 0.0
    return {"precision": precision, "recall": recall, "f1": f1(precision, recall)}


def top_k_selections(documents: dict, config: PlausibilityConfig) -> tuple[list, list]:
    """Each document's top-k words (as ``example_metrics`` selects them) and its human mask."""
    selections, humans = [], []
    for scores, human in documents.values():
        human = np.asarray(human, dtype=bool)
        k = top_k_size(config.top_k, human.size, int(human.sum()))
        selections.append(binarize_top_k(scores, human, k, config.sign, config.ties))
        humans.append(human)
    return selections, humans


def micro_macro_table(methods: dict[str, dict], config: PlausibilityConfig, resamples: int = 2000,
                      seed: int = 0) -> pd.DataFrame:
    """Per method (``{method: {document id: (scores, human)}}``): macro and micro F1 with bootstrap CIs."""
    rows = []
    for method, documents in methods.items():
        selections, humans = top_k_selections(documents, config)
        n = len(selections)
        if n == 0:
            continue
        per_document = np.array([set_scores(s, h)["f1"] for s, h in zip(selections, humans)])
        rng = np.random.default_rng(seed)
        draws = [rng.integers(0, n, n) for _ in range(resamples if n > 1 else 0)]
        micro = micro_scores(selections, humans)
        boot_macro = np.array([per_document[d].mean() for d in draws])
        boot_micro = np.array([micro_scores([selections[i] for i in d], [humans[i] for i in d])["f1"] for d in draws])
        row = {"method": method, "n": n, "macro_f1": float(per_document.mean()), "micro_f1": micro["f1"],
               "micro_precision": micro["precision"], "micro_recall": micro["recall"]}
        for key, boot in (("macro_f1", boot_macro), ("micro_f1", boot_micro)):
            row[f"{key}_low"] = float(np.quantile(boot, 0.025)) if boot.size else float("nan")
            row[f"{key}_high"] = float(np.quantile(boot, 0.975)) if boot.size else float("nan")
        rows.append(row)
    return pd.DataFrame(rows)
