"""The bias matrix of paper 000: which cells are highlighted and why, and the operator sweep's numbers."""
from __future__ import annotations

import numpy as np
import pytest
from tolerances import float32_tolerance

from evaluation.faithfulness.bias import (
    OPERATOR_IDS,
    SWEEP,
    SWEEP_METRICS,
    bias_matrix,
    method_operator,
    sweep_for_input,
    sweep_operators,
)
from evaluation.faithfulness.curves import RemovalOptions, evaluate_scores
from evaluation.faithfulness.presets import BY_ID
from evaluation.metric import EVALUATORS
from explainers import create

TEXT = "a film with excellent music and a very old plot"


class ReplaceWithThe:
    name = "fill-with-the"

    def fill(self, encoding, keep):
        return [[w if k else "the" for w, k in zip(encoding.words, row)] for row in np.atleast_2d(keep)]


def test_method_operators_come_from_the_methods():
    assert method_operator("leave_one_out") == "delete"
    assert method_operator("leave_one_out:paper-000-unk") == "unk"
    assert method_operator("leave_one_out:paper-000-zero") == "pad"
    assert method_operator("saliency") is None  # gradients remove nothing
    assert method_operator("no_such_method") is None


def test_shared_cells_and_reasons():
    metrics = {"Deletion AUC": "delete", "Log-odds @20 %": "mask", "Sufficiency (AOPC)": "delete"}
    matrix = bias_matrix(["leave_one_out", "leave_one_out:paper-000-unk", "saliency"], metrics,
                         {"leave_one_out": "LOO-empty"})
    shared = matrix.shared
    assert shared.loc["leave_one_out", "delete"]
    assert not shared.loc["leave_one_out:paper-000-unk"].any()  # no shown metric uses [UNK]
    assert not shared.loc["saliency"].any()
    assert int(shared.to_numpy().sum()) == 1
    line = matrix.reasons[("leave_one_out", "delete")]
    assert "LOO-empty" in line and "Deletion AUC" in line and "Sufficiency (AOPC)" in line and "paper 000" in line
    frame = matrix.to_frame()
    assert len(frame) == 3 * len(OPERATOR_IDS)
    assert frame[frame["shared"]]["operator"].tolist() == ["delete"]


def test_sweep_matches_single_operator_evaluation(keyword_classifier):
    encoding = keyword_classifier.encode(TEXT)
    explanations = {spec: create(*spec.split(":")[:1], preset=(spec.split(":") + [None])[1])
                    .explain(keyword_classifier, encoding) for spec in ("leave_one_out", "leave_one_out:paper-000-unk")}
    table = sweep_for_input(keyword_classifier, encoding, explanations, {"filler": ReplaceWithThe()})
    assert list(table.columns) == list(OPERATOR_IDS)  # the filler adds the MLM column
    for spec, explanation in explanations.items():
        for op in OPERATOR_IDS:
            alone = evaluate_scores(keyword_classifier, encoding, [BY_ID["deletion-auc"]], explanation.word_scores,
                                    RemovalOptions(operator=op), filler_options={"filler": ReplaceWithThe()})
            assert table.loc[spec, op] == pytest.approx(alone.values["deletion-auc"], abs=float32_tolerance(1.0))
    matrix = bias_matrix(list(explanations), {"Deletion AUC": "delete"}, values=table, higher_is_better=False)
    assert matrix.ranks().shape == (2, len(OPERATOR_IDS))


def test_sweep_evaluator_leaves_out_mlm_without_a_filler(keyword_classifier, isolated_cache, monkeypatch):
    from models.mlm import clear_loaded

    clear_loaded()  # the masked LM is looked up again, in this cache
    assert "mlm" not in sweep_operators({})
    assert "mlm" in sweep_operators({"filler": ReplaceWithThe()})
    encoding = keyword_classifier.encode(TEXT)
    explanation = create("leave_one_out").explain(keyword_classifier, encoding)
    values = EVALUATORS[SWEEP].compute(keyword_classifier, encoding, explanation, None, {})
    assert set(values) == {SWEEP_METRICS[op].id for op in OPERATOR_IDS if op != "mlm"}
    assert "MLM" in values.details["note"]
