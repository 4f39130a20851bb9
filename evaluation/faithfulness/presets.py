"""Every paper's removal metric as a named preset, with its metadata, and the evaluators that compute them.

| evaluator      | metrics (ids)                                              | definition                                     |
|----------------|------------------------------------------------------------|------------------------------------------------|
| eraser         | comprehensiveness-eraser, sufficiency-eraser               | ERASER paper / paper 004 code: bins 1, 5, 10, 20, 50 %, floor, words deleted, AOPC = sum / (bins + 1), empty bin 0 |
| paper-004-text | comprehensiveness-004-text, sufficiency-004-text           | paper 004 App.: the same bins, AOPC = sum / bins (1/|B| as printed) |
| eraser-official| comprehensiveness-eraser-official, sufficiency-eraser-official | ERASER's rationale_benchmark/metrics.py: AOPC = mean over the 5 bins, an empty sufficiency bin scored literally |
| paper-004      | comprehensiveness-004, sufficiency-004, log-odds-004       | paper 004 at k = 20 %: Comp / Suff deleted, LO with [MASK] |
| paper-002      | comprehensiveness-002, sufficiency-002                     | paper 002 Eq. 10-11: 19 points 5..95 %, [PAD], mean |
| paper-003      | comprehensiveness-003, sufficiency-003                     | paper 003 s. 2.2.3.2 Def. 2.1 / 2.2: top 5/10/20/50 % removed / bottom 95/90/80/50 % removed, ceil, [MASK], mean signed change |
| paper-003-code | comprehensiveness-003-code, sufficiency-003-code           | the same with mean |change| (the thesis code's plots) |
| deletion       | deletion-auc                                               | paper 000 s. 3.3 (Deletion): delete the top words one at a time up to 20 %, AUC of p |
| deletion-bert  | deletion-bert-auc                                          | paper 000 s. 3.3 (DeletionBERT): same with the masked LM's top-1 word (mlm operator) |
| insertion      | insertion-auc                                              | insert the top words one at a time into the empty input, AUC of p |
| decision-flip  | decision-flip                                              | fraction of words removed (by importance) until the predicted class changes |
| ferret         | comprehensiveness-ferret, sufficiency-ferret               | ferret-xai's AOPC: top 10..100 % (floor) of the words scored > 0, words deleted, repeated points dropped, mean |
| road           | road-morf, road-lerf                                       | ROAD for text (Rong et al. 2022, adapted): MoRF / LeRF at 10..90 %, removed words imputed by the masked LM's top-1 word (mlm operator), mean p(target) |
| road-deletionbert-grid | road-morf[deletionbert-grid], road-lerf[deletionbert-grid] | the same curves on DeletionBERT's grid (one word per step up to 20 %): equal work per point |
| faithfulness   | all of the above except DeletionBERT                        | |

Each metric takes the options of ``RemovalOptions`` (operator, target, special tokens, tie-break seed).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from evaluation.faithfulness.curves import RemovalMetric, RemovalOptions, evaluate_scores
from evaluation.faithfulness.random_band import methods_and_random
from evaluation.faithfulness.removal_provenance import provenance
from evaluation.metric import EVALUATORS, BatchResult, Evaluator, Metric, MetricValues, register_evaluator
from explainers.params import options_from, with_values

ERASER_BINS = (0.01, 0.05, 0.10, 0.20, 0.50)
P002_POINTS = tuple(round(0.05 * i, 2) for i in range(1, 20))
P003_COMP = (0.05, 0.10, 0.20, 0.50)
P003_SUFF = (0.95, 0.90, 0.80, 0.50)

PRESETS = {
    "eraser": "ERASER paper / paper 004 code (AOPC over 1, 5, 10, 20, 50 %, words deleted, sum / 6)",
    "paper-004-text": "paper 004 appendix (AOPC over 1, 5, 10, 20, 50 %, words deleted, sum / 5 as printed)",
    "eraser-official": "ERASER's official scoring script (AOPC = mean of the 5 bins, empty bin scored literally)",
    "paper-004": "paper 004 at k = 20 % (Comp / Suff deleted, log-odds [MASK])",
    "paper-002": "paper 002 (19 points 5-95 %, [PAD], mean)",
    "paper-003": "paper 003 Def. 2.1 / 2.2 (5/10/20/50 %, ceil, [MASK], mean signed change)",
    "paper-003-code": "paper 003 code (5/10/20/50 %, ceil, [MASK], mean |change| as the thesis plots)",
    "deletion": "paper 000 Deletion (top words deleted one at a time up to 20 %, AUC)",
    "deletion-bert": "paper 000 DeletionBERT (top-1 masked-LM fill up to 20 %, AUC)",
    "insertion": "Insertion (top words inserted one at a time into the empty input, AUC)",
    "decision-flip": "Decision flip (words removed by importance until the prediction changes)",
    "road": "ROAD for text, Rong et al. 2022's grid (MoRF / LeRF at 10-90 %, removed words imputed by the masked LM)",
    "road-deletionbert-grid": "ROAD for text on DeletionBERT's grid (MoRF / LeRF one word at a time up to 20 %, "
                              "masked-LM imputed): the same points as DeletionBERT, for an equal-work comparison",
    "ferret": "ferret-xai AOPC (top 10-100 % of the positive words, deleted, repeated points dropped, mean)",
}

_ERASER_REF = "DeYoung et al. 2020 (ERASER), AOPC as printed (1 / (|B| + 1)); paper 004 s. 4 and code (bins " \
              "{1,5,10,20,50} %, divisor |B|+1 = 6)"
_004_TEXT_REF = "paper 004 App. (AOPC-S / AOPC-C = (1/|B|) sum over B; seeds-002-004.md 004 metrics)"
_OFFICIAL_REF = "ERASER rationale_benchmark/metrics.py (jayded/eraserbenchmark): _instances_aopc = np.average over " \
                "the thresholds; the model's score on the empty rationale is used as given"
# The conventions each AOPC preset follows, named in the metric's metadata (``Metric.params['convention']``).
CONVENTION_004_CODE = "AOPC divisor |B|+1 = 6 (ERASER paper, paper 004 code); an empty sufficiency bin counts 0"
CONVENTION_004_TEXT = "AOPC divisor |B| = 5 (paper 004 appendix); an empty sufficiency bin counts 0"
CONVENTION_OFFICIAL = ("AOPC = mean over the |B| = 5 bins (ERASER script); an empty sufficiency bin is scored "
                       "literally: p(x) - p(no words)")
CONVENTION_SIGNED = "signed change p(x) - p(x') (paper 003 Def. 2.1 / 2.2)"
CONVENTION_ABSOLUTE = "absolute change |p(x) - p(x')| (paper 003 code, the thesis's plots)"

METRICS: tuple[RemovalMetric, ...] = (
    RemovalMetric(
        id="comprehensiveness-eraser", label="Comprehensiveness (AOPC)", preset="eraser",
        preset_label=PRESETS["eraser"],
        higher_is_better=True, range=(-1.0, 1.0), operator="delete", mode="remove", fractions=ERASER_BINS,
        rounding="floor", summary="aopc", curve="comprehensiveness", convention=CONVENTION_004_CODE,
        description="p(target | x) - p(target | x without its top-k % words), summed over k in 1, 5, 10, 20, 50 % and "
                    "divided by 6 (ERASER paper / paper 004 code). Higher: removing what the method marks hurts more.",
        reference=_ERASER_REF),
    RemovalMetric(
        id="sufficiency-eraser", label="Sufficiency (AOPC)", preset="eraser", preset_label=PRESETS["eraser"],
        higher_is_better=False, range=(-1.0, 1.0), operator="delete", mode="keep", fractions=ERASER_BINS,
        rounding="floor", summary="aopc", empty="zero", curve="sufficiency", convention=CONVENTION_004_CODE,
        description="p(target | x) - p(target | only the top-k % words), AOPC over 1, 5, 10, 20, 50 % (/ 6); a bin "
                    "that keeps no word counts 0 (paper 004 code). Lower: the marked words alone keep the prediction.",
        reference=_ERASER_REF),
    RemovalMetric(
        id="comprehensiveness-004-text", label="Comprehensiveness (AOPC, / |B|)", preset="paper-004-text",
        preset_label=PRESETS["paper-004-text"], higher_is_better=True, range=(-1.0, 1.0), operator="delete",
        mode="remove", fractions=ERASER_BINS, rounding="floor", summary="aopc", aopc_divisor="bins",
        curve="comprehensiveness", convention=CONVENTION_004_TEXT,
        description="As the ERASER AOPC but divided by |B| = 5, as paper 004's appendix prints it (its code divides "
                    "by 6). Higher is better.",
        reference=_004_TEXT_REF),
    RemovalMetric(
        id="sufficiency-004-text", label="Sufficiency (AOPC, / |B|)", preset="paper-004-text",
        preset_label=PRESETS["paper-004-text"], higher_is_better=False, range=(-1.0, 1.0), operator="delete",
        mode="keep", fractions=ERASER_BINS, rounding="floor", summary="aopc", aopc_divisor="bins", empty="zero",
        curve="sufficiency", convention=CONVENTION_004_TEXT,
        description="As the ERASER sufficiency AOPC but divided by |B| = 5 (paper 004 appendix); an empty bin "
                    "counts 0. Lower is better.",
        reference=_004_TEXT_REF),
    RemovalMetric(
        id="comprehensiveness-eraser-official", label="Comprehensiveness (AOPC, ERASER script)",
        preset="eraser-official", preset_label=PRESETS["eraser-official"], higher_is_better=True,
        range=(-1.0, 1.0), operator="delete", mode="remove", fractions=ERASER_BINS, rounding="floor",
        summary="aopc", aopc_divisor="bins", curve="comprehensiveness", convention=CONVENTION_OFFICIAL,
        description="ERASER's official script: the mean over the 5 bins (1, 5, 10, 20, 50 %) of p(target | x) - "
                    "p(target | x without its top-k % words). Higher is better.",
        reference=_OFFICIAL_REF),
    RemovalMetric(
        id="sufficiency-eraser-official", label="Sufficiency (AOPC, ERASER script, empty bin scored)",
        preset="eraser-official", preset_label=PRESETS["eraser-official"], higher_is_better=False,
        range=(-1.0, 1.0), operator="delete", mode="keep", fractions=ERASER_BINS, rounding="floor",
        summary="aopc", aopc_divisor="bins", empty="evaluate", curve="sufficiency", convention=CONVENTION_OFFICIAL,
        description="ERASER's official script: the mean over the 5 bins of p(target | x) - p(target | only the "
                    "top-k % words); a bin that keeps no word is scored as the model's output on the empty input "
                    "(on short sentences the 1 % bin is always empty). Lower is better.",
        reference=_OFFICIAL_REF),
    RemovalMetric(
        id="comprehensiveness-004", label="Comprehensiveness @20 %", preset="paper-004",
        preset_label=PRESETS["paper-004"], higher_is_better=True, range=(-1.0, 1.0), operator="delete",
        mode="remove", fractions=(0.20,), rounding="floor", summary="point", curve="comprehensiveness",
        description="p(target | x) - p(target | x without its top 20 % words), words deleted.",
        reference="paper 004 s. 4, Comp with k = 20 (int(L k / 100) tokens, deleted)"),
    RemovalMetric(
        id="sufficiency-004", label="Sufficiency @20 %", preset="paper-004", preset_label=PRESETS["paper-004"],
        higher_is_better=False, range=(-1.0, 1.0), operator="delete", mode="keep", fractions=(0.20,),
        rounding="floor", summary="point", empty="zero", curve="sufficiency",
        description="p(target | x) - p(target | only the top 20 % words); 0 when 20 % is less than one word.",
        reference="paper 004 s. 4, Suff with k = 20 (code returns 0 when int(L k / 100) = 0)"),
    RemovalMetric(
        id="log-odds-004", label="Log-odds @20 % [MASK]", preset="paper-004", preset_label=PRESETS["paper-004"],
        higher_is_better=False, range=(None, None), operator="mask", mode="remove", fractions=(0.20,),
        rounding="floor", score="log-probability", value="change", summary="point", curve="log-odds",
        description="log p(target | top 20 % words replaced by [MASK]) - log p(target | x) (natural log). Lower "
                    "(more negative): the marked words carried the prediction.",
        reference="paper 004 s. 4 (LO, Shrikumar et al. 2017; k = 20, <MASK> for encoders)"),
    RemovalMetric(
        id="comprehensiveness-002", label="Comprehensiveness (19 points)", preset="paper-002",
        preset_label=PRESETS["paper-002"], higher_is_better=True, range=(-1.0, 1.0), operator="pad", mode="remove",
        fractions=P002_POINTS, rounding="ceil", summary="mean", paper_target="gold", curve="comprehensiveness",
        description="Mean over the top 5, 10, ..., 95 % of words replaced by [PAD] of p(x) - p(x without them). "
                    "Paper 002 reads the gold class (set target = gold); rounding is not given in the paper (ceil).",
        reference="paper 002 Eq. 10, s. 4.2 ([PAD] replacement, mean not AUC because values can be negative)"),
    RemovalMetric(
        id="sufficiency-002", label="Sufficiency (19 points)", preset="paper-002", preset_label=PRESETS["paper-002"],
        higher_is_better=False, range=(-1.0, 1.0), operator="pad", mode="keep", fractions=P002_POINTS,
        rounding="ceil", summary="mean", paper_target="gold", curve="sufficiency",
        description="Mean over keeping only the top 5, 10, ..., 95 % of words (the rest [PAD]) of p(x) - p(kept). "
                    "Can be negative.",
        reference="paper 002 Eq. 11, s. 4.2"),
    RemovalMetric(
        id="comprehensiveness-003", label="Comprehensiveness (signed)", preset="paper-003",
        preset_label=PRESETS["paper-003"], higher_is_better=True, range=(-1.0, 1.0), operator="mask", mode="remove",
        fractions=P003_COMP, rounding="ceil", summary="mean", curve="comprehensiveness",
        convention=CONVENTION_SIGNED,
        description="Mean over removing the top ceil(5, 10, 20, 50 % x n) words ([MASK]) of p(x) - p(x'), signed "
                    "as the thesis defines it. Higher is better.",
        reference="paper 003 s. 2.2.3.2 Def. 2.2 (signed)"),
    RemovalMetric(
        id="sufficiency-003", label="Sufficiency (signed)", preset="paper-003", preset_label=PRESETS["paper-003"],
        higher_is_better=False, range=(-1.0, 1.0), operator="mask", mode="keep", fractions=P003_SUFF,
        rounding="ceil", complement=True, summary="mean", curve="sufficiency", convention=CONVENTION_SIGNED,
        description="Mean over removing the bottom ceil(95, 90, 80, 50 % x n) words ([MASK]) of p(x) - p(x'), "
                    "signed as the thesis defines it (can be negative). Lower is better.",
        reference="paper 003 s. 2.2.3.2 Def. 2.1 (signed); the code removes the bottom ceil(s n) for s in "
                  "{.95, .9, .8, .5}"),
    RemovalMetric(
        id="comprehensiveness-003-code", label="Comprehensiveness (|change|)", preset="paper-003-code",
        preset_label=PRESETS["paper-003-code"], higher_is_better=True, range=(0.0, 1.0), operator="mask",
        mode="remove", fractions=P003_COMP, rounding="ceil", absolute=True, summary="mean", curve="comprehensiveness",
        convention=CONVENTION_ABSOLUTE,
        description="Mean over removing the top ceil(5, 10, 20, 50 % x n) words ([MASK]) of |p(x) - p(x')|, the "
                    "absolute change the thesis code plots.",
        reference="paper 003 code (metrics.FeatureRemoval; the plots use mean |delta|), not Def. 2.2's signed form"),
    RemovalMetric(
        id="sufficiency-003-code", label="Sufficiency (|change|)", preset="paper-003-code",
        preset_label=PRESETS["paper-003-code"], higher_is_better=False, range=(0.0, 1.0), operator="mask",
        mode="keep", fractions=P003_SUFF, rounding="ceil", complement=True, absolute=True, summary="mean",
        curve="sufficiency", convention=CONVENTION_ABSOLUTE,
        description="Mean over removing the bottom ceil(95, 90, 80, 50 % x n) words ([MASK]) of |p(x) - p(x')| "
                    "(the thesis code's plots).",
        reference="paper 003 code (removes the bottom ceil(s n) for s in {.95, .9, .8, .5}; plots mean |delta|)"),
    RemovalMetric(
        id="deletion-auc", label="Deletion AUC", preset="deletion", preset_label=PRESETS["deletion"],
        higher_is_better=False, range=(0.0, 1.0), operator="delete", mode="remove", schedule="steps",
        max_fraction=0.2, min_steps=2, value="level", summary="auc", curve="deletion",
        description="Delete the top words one at a time, K = ceil(0.2 (n - 1)) (at least 2) steps; area under "
                    "p(target) over x = j / K, j = 1..K (the unperturbed input is not on the curve). Lower is better.",
        reference="paper 000 s. 3.3 (Deletion) and code (Arras et al. 2017)"),
    RemovalMetric(
        id="deletion-bert-auc", label="DeletionBERT AUC", preset="deletion-bert", preset_label=PRESETS["deletion-bert"],
        higher_is_better=False, range=(0.0, 1.0), operator="mlm", mode="remove", schedule="steps",
        max_fraction=0.2, min_steps=2, value="level", summary="auc", curve="deletion",
        description="Deletion AUC with each removed word replaced by the masked LM's top-1 word instead of deleted "
                    "(AUCrep). Biased towards methods that use the same masked LM (paper 000 Table 1).",
        reference="paper 000 s. 3.3 (DeletionBERT; Kim et al. 2020, AUCrep)"),
    RemovalMetric(
        id="insertion-auc", label="Insertion AUC", preset="insertion", preset_label=PRESETS["insertion"],
        higher_is_better=True, range=(0.0, 1.0), operator="delete", mode="keep", schedule="steps", max_fraction=1.0,
        include_start=True, value="level", summary="auc", curve="insertion",
        description="Start from the input with every word removed and insert the words in order of importance; "
                    "area under p(target) over the fraction inserted (0..1). Higher is better.",
        reference="Arras et al. 2017 / Petsiuk et al. 2018, named in paper 000 s. 4 (shares Deletion's bias)"),
    RemovalMetric(
        id="decision-flip", label="Decision flip (fraction removed)", preset="decision-flip",
        preset_label=PRESETS["decision-flip"], higher_is_better=False, range=(0.0, 1.0), operator="delete",
        mode="remove", schedule="steps", max_fraction=1.0, value="level", summary="flip", curve="decision-flip",
        description="Remove words in order of importance until the predicted class changes; the fraction removed "
                    "then (1.0 when it never changes). Lower: fewer top words decide the prediction.",
        reference="Chrysostomou & Aletras 2021 (fraction of tokens for a decision flip); paper 004 pitfalls"),
)
# ROAD (Rong et al., ICML 2022, arXiv 2202.00449) adapted to text: the curve engine's mlm operator imputes each
# removed word with the masked LM's top-1 word (ROAD's noisy linear imputation has no text analogue), so no
# retraining and less distribution shift than deletion. MoRF removes the top f, LeRF the bottom f of the ranking.
ROAD_FRACTIONS = tuple(round(0.1 * i, 1) for i in range(1, 10))
_ROAD_REF = ("Rong et al., ICML 2022 (ROAD, arXiv 2202.00449), MoRF / LeRF at 10..90 %; adapted to text: imputation "
             "by the masked LM's top-1 word (mlm operator) instead of noisy linear imputation")
# MoRF and LeRF are two metrics (two values on screen and in the export), so each is priced against DeletionBERT's
# one curve; a point costs what a DeletionBERT step costs (one masked-LM and one classifier sequence)
_ROAD_COST = ("per curve (MoRF and LeRF are separate values): 9 points, each one masked-LM sequence (the removed "
              "words filled jointly) and at most one classifier sequence, as a DeletionBERT step; DeletionBERT has "
              "K = ceil(0.2 (n - 1)) >= 2 points, so on SST-2 a curve on this grid costs about 2.6x "
              "DeletionBERT's passes (the same grid: road-deletionbert-grid; docs/benchmarks.md)")
_ROAD_GRID_COST = ("per curve (MoRF and LeRF are separate values): 0.88x DeletionBERT's passes on its "
                   "own grid (the MoRF rows are DeletionBERT's; chosen together, DeletionBERT costs nothing extra); "
                   "the pair 1.77x (docs/benchmarks.md)")
ROAD_METRICS: tuple[RemovalMetric, ...] = (
    RemovalMetric(
        id="road-morf", label="ROAD MoRF (MLM-imputed)", preset="road", preset_label=PRESETS["road"],
        higher_is_better=False, range=(0.0, 1.0), operator="mlm", mode="remove", fractions=ROAD_FRACTIONS,
        rounding="ceil", value="level", summary="mean", curve="road-morf",
        description="Most relevant first: mean over removing the top ceil(10, 20, ..., 90 % x n) words, each imputed "
                    "by the masked LM's top-1 word, of p(target). Lower: imputing the marked words hurts more.",
        reference=_ROAD_REF, cost=_ROAD_COST),
    RemovalMetric(
        id="road-lerf", label="ROAD LeRF (MLM-imputed)", preset="road", preset_label=PRESETS["road"],
        higher_is_better=True, range=(0.0, 1.0), operator="mlm", mode="keep", fractions=ROAD_FRACTIONS,
        rounding="ceil", complement=True, value="level", summary="mean", curve="road-lerf",
        description="Least relevant first: mean over imputing the bottom ceil(10, 20, ..., 90 % x n) words with the "
                    "masked LM of p(target). Higher: the unmarked words did not matter.",
        reference=_ROAD_REF, cost=_ROAD_COST),
)
# ferret-xai 0.4 (evaluators/faithfulness_measures.py with utils_from_soft_to_discrete.parse_evaluator_args
# defaults): remove_tokens=True, based_on="perc" at 10, 20, ..., 100 % (int(p n)), only_pos=True,
# remove_first_last=True; a threshold whose rationale equals the previous one is left out of the mean; with no
# threshold left comprehensiveness is 0 and sufficiency 1. ferret counts sub-word tokens and decodes and
# re-tokenizes; here the unit is the word and removal is on token ids.
FERRET_THRESHOLDS = tuple(round(0.1 * i, 1) for i in range(1, 11))
_FERRET_REF = "ferret-xai 0.4 AOPC_Comprehensiveness_Evaluation / AOPC_Sufficiency_Evaluation with its default " \
              "evaluator arguments (Attanasio et al. 2023)"
CONVENTION_FERRET = "only words scored > 0 (only_pos); a point equal to the one before is dropped; mean"
FERRET_METRICS: tuple[RemovalMetric, ...] = (
    RemovalMetric(
        id="comprehensiveness-ferret", label="Comprehensiveness (AOPC, ferret)", preset="ferret",
        preset_label=PRESETS["ferret"], higher_is_better=True, range=(-1.0, 1.0), operator="delete", mode="remove",
        fractions=FERRET_THRESHOLDS, rounding="floor", summary="mean", positive_only=True, distinct_points=True,
        no_points_value=0.0, curve="comprehensiveness", convention=CONVENTION_FERRET,
        description="Mean over 10, 20, ..., 100 % of p(target | x) - p(target | x without its top int(p n) words "
                    "scored > 0), words deleted, repeated points left out; 0 when no word is scored > 0. Higher is "
                    "better.",
        reference=_FERRET_REF),
    RemovalMetric(
        id="sufficiency-ferret", label="Sufficiency (AOPC, ferret)", preset="ferret", preset_label=PRESETS["ferret"],
        higher_is_better=False, range=(-1.0, 1.0), operator="delete", mode="keep", fractions=FERRET_THRESHOLDS,
        rounding="floor", summary="mean", positive_only=True, distinct_points=True, no_points_value=1.0,
        curve="sufficiency", convention=CONVENTION_FERRET,
        description="Mean over 10, 20, ..., 100 % of p(target | x) - p(target | only its top int(p n) words scored "
                    "> 0), the rest deleted, repeated points left out; 1 when no word is scored > 0 (ferret). Lower "
                    "is better.",
        reference=_FERRET_REF),
)
# The same two curves on DeletionBERT's removal grid (paper 000 s. 3.3: one word per step up to 20 % of the words,
# at least 2 steps): MoRF's rows are then exactly DeletionBERT's (same removed sets, same operator), so the two
# measures cost the same per point and ROAD differs only by its second curve (LeRF).
ROAD_DB_GRID = "deletionbert-grid"
_DB_GRID: dict[str, Any] = dict(schedule="steps", fractions=(), max_fraction=0.2, min_steps=2, rounding="ceil",
                preset="road-deletionbert-grid", preset_label=PRESETS["road-deletionbert-grid"], cost=_ROAD_GRID_COST)
ROAD_DB_GRID_METRICS: tuple[RemovalMetric, ...] = (
    replace(ROAD_METRICS[0], id=f"road-morf[{ROAD_DB_GRID}]", label="ROAD MoRF (MLM-imputed, DeletionBERT's grid)",
            curve=f"road-morf[{ROAD_DB_GRID}]", description="Most relevant first on DeletionBERT's grid: mean p(target) "
            "over imputing the top 1, 2, ..., K words with the masked LM (K as DeletionBERT: ceil(0.2 (n - 1)), at least "
            "2). Lower: imputing the marked words hurts more.", **_DB_GRID),
    replace(ROAD_METRICS[1], id=f"road-lerf[{ROAD_DB_GRID}]", label="ROAD LeRF (MLM-imputed, DeletionBERT's grid)",
            curve=f"road-lerf[{ROAD_DB_GRID}]", description="Least relevant first on DeletionBERT's grid: mean p(target) "
            "over imputing the bottom 1, 2, ..., K words with the masked LM. Higher: the unmarked words did not matter.",
            **_DB_GRID),
)
METRICS = METRICS + ROAD_METRICS + ROAD_DB_GRID_METRICS + FERRET_METRICS
BY_ID = {m.id: m for m in METRICS}


def metric_record(metric: RemovalMetric) -> Metric:
    """The shared ``evaluation.metric.Metric`` metadata of a removal metric."""
    return Metric(id=metric.id, label=metric.label, family="faithfulness", higher_is_better=metric.higher_is_better,
                  range=metric.range, description=metric.description, reference=metric.reference,
                  operator=metric.operator, preset=metric.preset,
                  params={"mode": metric.mode, "schedule": metric.schedule, "fractions": list(metric.fractions),
                          "rounding": metric.rounding, "score": metric.score, "value": metric.value,
                          "absolute": metric.absolute, "summary": metric.summary, "paper_target": metric.paper_target,
                          "curve": metric.curve, "convention": metric.convention,
                          **({"cost": metric.cost} if metric.cost else {})})


def compute_removal(metrics: tuple[RemovalMetric, ...]):
    """An evaluator's compute function for these metrics (values + curves + provenance)."""

    def compute(classifier, encoding, explanation, example, options) -> MetricValues:
        removal = options_from(RemovalOptions, options)
        result = evaluate_scores(classifier, encoding, list(metrics), explanation.word_scores, removal, example,
                                 explanation, filler_options=options)
        return MetricValues(result.values, curves={k: c.to_dict() for k, c in result.curves.items()},
                            details={m.id: provenance(m, removal) for m in metrics})

    return compute


@dataclass(frozen=True)
class RemovalEvaluator(Evaluator):
    """An evaluator of removal metrics; a dataset run scores all of them together (``removal_batch``).

    ``metrics_for(options)`` gives the removal metrics under the run's options; with ``own_operators`` each
    metric keeps its own operator whatever the run's ``operator`` option (the operator sweep).
    """

    metrics_for: Callable[[dict], tuple[RemovalMetric, ...]] = field(kw_only=True)  # required (after defaults)
    own_operators: bool = False


def removal_batch(evaluators: list[RemovalEvaluator], classifier, encoding, example, explanations: dict,
                  options: dict, n_random: int) -> BatchResult:
    """Every removal evaluator, every method's ranking and ``n_random`` random orderings of one example in one
    engine call per removal operator (evaluators that keep their metrics' operators form a second group)."""
    result = BatchResult()
    scores = {name: explanation.word_scores for name, explanation in explanations.items()}
    first = next(iter(explanations.values()), None)
    for own_operators in (False, True):
        group = [e for e in evaluators if e.own_operators == own_operators]
        if not group:
            continue
        chosen = {e.id: tuple(e.metrics_for(options)) for e in group}
        metrics = list({m.id: m for ms in chosen.values() for m in ms}.values())
        metric_options = with_values(options, operator=None) if own_operators else options
        removal = options_from(RemovalOptions, metric_options)
        per_method, baseline = methods_and_random(classifier, encoding, metrics, scores, removal, example, first,
                                                  n_random, filler_options=metric_options)
        for evaluator_id, own in chosen.items():
            result.values[evaluator_id] = {
                name: MetricValues({m.id: values.values[m.id] for m in own},
                                   curves={m.id: values.curves[m.id].to_dict() for m in own},
                                   details={m.id: provenance(m, removal) for m in own})
                for name, values in per_method.items()}
        if n_random > 0:
            for metric in metrics:
                result.random.setdefault(metric.id, baseline.values[metric.id])
                result.random_curves.setdefault(metric.id, baseline.curves[metric.id])
    return result


def register_removal(evaluator_id: str, label: str, metrics: tuple[RemovalMetric, ...], compute=None,
                     metrics_for=None, own_operators: bool = False) -> RemovalEvaluator:
    return register_evaluator(RemovalEvaluator(
        id=evaluator_id, label=label, metrics=tuple(metric_record(m) for m in metrics),
        compute=compute or compute_removal(metrics), batch=removal_batch,
        metrics_for=metrics_for or (lambda options: metrics), own_operators=own_operators))


EVALUATOR_METRICS = {
    "eraser": ("comprehensiveness-eraser", "sufficiency-eraser"),
    "paper-004-text": ("comprehensiveness-004-text", "sufficiency-004-text"),
    "eraser-official": ("comprehensiveness-eraser-official", "sufficiency-eraser-official"),
    "paper-004": ("comprehensiveness-004", "sufficiency-004", "log-odds-004"),
    "paper-002": ("comprehensiveness-002", "sufficiency-002"),
    "paper-003": ("comprehensiveness-003", "sufficiency-003"),
    "paper-003-code": ("comprehensiveness-003-code", "sufficiency-003-code"),
    "deletion": ("deletion-auc",),
    "deletion-bert": ("deletion-bert-auc",),
    "insertion": ("insertion-auc",),
    "decision-flip": ("decision-flip",),
    "road": ("road-morf", "road-lerf"),
    "road-deletionbert-grid": (f"road-morf[{ROAD_DB_GRID}]", f"road-lerf[{ROAD_DB_GRID}]"),
    "ferret": ("comprehensiveness-ferret", "sufficiency-ferret"),
}
GROUP = "faithfulness"


def _register() -> None:
    if GROUP in EVALUATORS:
        return
    for evaluator_id, ids in EVALUATOR_METRICS.items():
        register_removal(evaluator_id, PRESETS[evaluator_id], tuple(BY_ID[i] for i in ids))
    register_removal(GROUP, "Every removal metric and preset (not DeletionBERT)",
                     tuple(m for m in METRICS if m.operator != "mlm"))


_register()


def removal_metrics_of(evaluator_id: str, options: dict | None = None) -> tuple[RemovalMetric, ...] | None:
    """The removal metrics behind an evaluator, or None for evaluators of other kinds (plausibility, ...)."""
    evaluator = EVALUATORS.get(evaluator_id)
    return tuple(evaluator.metrics_for(options or {})) if isinstance(evaluator, RemovalEvaluator) else None
