"""Partition SHAP against shap 0.44.1's own PartitionExplainer and text tree (values recorded below, computed in
.venv-ferret by ``bench/ferret/shap_reference.py``), exact Owen values of simple games, and the explainer
on a tiny classifier (efficiency, [CLS]/[SEP] leaves, the ferret preset's budget)."""
from __future__ import annotations

import numpy as np
import pytest

from explainers import create
from explainers.methods.partition_shap import (full_expansion_evals, member_matrix, owen_values, partition_tree,
                                               tree_leaves)
from explainers.scores import class_score
from models.perturb import perturbed_logits
from tolerances import float32_tolerance

NAMES = ["", "it", "'s", "a", "charming", "and", "often", "affecting", "journey", ".", ""]
WEIGHTS = np.array([0.3, -0.7, 1.1, 0.2, -0.4, 0.9])


def game(keep: np.ndarray) -> np.ndarray:
    """A fixed 6-player set function with interactions: tanh of a weighted sum plus two pair terms."""
    keep = np.asarray(keep, dtype=np.float64)
    return np.tanh(keep @ WEIGHTS) + 0.5 * keep[:, 1] * keep[:, 2] - 0.8 * keep[:, 0] * keep[:, 5]


GAME_TREE = np.array([[0, 1, 0.2, 2], [2, 3, 0.2, 2], [4, 5, 0.2, 2], [6, 7, 0.6, 4], [8, 9, 1.0, 6]], dtype=float)
# shap 0.44.1: PartitionExplainer(game over 0/1 rows, shap.maskers.Partition(zeros((1, 6)), clustering=GAME_TREE))
# called on ones((1, 6)) with batch_size=5 (bench/ferret/shap_reference.py)
SHAP_FULL = [-0.22970167454072485, -0.15761777012141678, 0.9366065089573483, 0.1204791162754319, -0.23744118819431498,
             0.15302665582593888]  # max_evals=500: the whole tree
SHAP_BUDGET = [0.01223252994659324, 0.01223252994659324, 0.322650560338726, 0.322650560338726, -0.23744118819431498,
               0.15302665582593888]  # max_evals=10: the budget binds after 8 masked calls
SHAP_TREE = [[0, 1, 2 / 11, 2], [2, 3, 2 / 11, 2], [6, 7, 2 / 11, 2], [12, 4, 3 / 11, 3], [13, 8, 3 / 11, 3],
             [11, 14, 5 / 11, 5], [15, 9, 4 / 11, 4], [5, 17, 5 / 11, 5], [16, 18, 10 / 11, 10], [19, 10, 1, 11]]
# (shap.maskers._text.partition_tree(NAMES, ["[SEP]"]) with Text.clustering's distance = size / largest size)


def test_tree_matches_shaps_text_heuristic():
    np.testing.assert_allclose(partition_tree(NAMES), np.asarray(SHAP_TREE), rtol=0, atol=1e-15)


def test_owen_values_match_shap_when_the_whole_tree_is_expanded():
    values, evals = owen_values(game, GAME_TREE, 6, max_evals=500, queue_batch=5, seed=0)
    np.testing.assert_allclose(values, SHAP_FULL, rtol=0, atol=1e-12)
    assert evals == full_expansion_evals(GAME_TREE, 6) + 2


def test_owen_values_match_shap_when_the_budget_binds():
    values, evals = owen_values(game, GAME_TREE, 6, max_evals=10, queue_batch=5, seed=0)
    np.testing.assert_allclose(values, SHAP_BUDGET, rtol=0, atol=1e-12)
    assert evals <= 10 + 1  # shap may overshoot by one mask pair


def test_owen_values_of_an_additive_game_are_its_weights():
    tree = partition_tree(NAMES)
    weights = np.linspace(-1.0, 1.0, len(NAMES))
    values, _ = owen_values(lambda keep: keep @ weights, tree, len(NAMES), 500, 5, 0)
    np.testing.assert_allclose(values, weights, rtol=0, atol=1e-12)


def test_owen_values_split_a_pair_interaction_evenly_inside_its_group():
    """f = x1 * x2 with 1 and 2 siblings: each gets 1/2 (as the Shapley value); the others 0."""
    values, _ = owen_values(lambda keep: keep[:, 1] * keep[:, 2] * 1.0, GAME_TREE, 6, 500, 5, 0)
    np.testing.assert_allclose(values, [0, 0.5, 0.5, 0, 0, 0], rtol=0, atol=1e-12)


def test_member_matrix_and_full_expansion_count():
    members = member_matrix(GAME_TREE, 6)
    assert members[10].all() and members[6].tolist() == [1, 1, 0, 0, 0, 0]
    # 2 masks per visit: the root once, nodes 8 and 9 twice each, nodes 6 and 7 (under 9) four times each
    assert full_expansion_evals(GAME_TREE, 6) == 2 * (1 + 2 + 2 + 4 + 4)


@pytest.fixture(scope="module")
def smooth():
    from smooth_models import smooth_classifier

    return smooth_classifier()


def test_explainer_is_efficient_and_uses_the_engine(smooth):
    encoding = smooth.encode("the movie was excellent and the music was long")
    explanation = create("partition_shap", preset="ferret").explain(smooth, encoding, target=1)
    everything = np.ones((1, encoding.n_words), dtype=bool)
    ends = perturbed_logits(smooth, encoding, np.vstack([everything, ~everything]), "mask")
    p_all, p_none = class_score(ends, 1, "probability")
    gap = p_all - p_none
    assert explanation.word_scores.sum() == pytest.approx(gap, abs=float32_tolerance(np.array([1.0])) * 100)
    assert explanation.provenance["details"]["tree_fully_expanded"]
    assert explanation.provenance["removal_operator"] == "mask"


def test_leaves_hold_cls_and_sep_that_score_nothing(smooth):
    encoding = smooth.encode("a b c")
    names, is_word = tree_leaves(encoding)
    assert names == ["", "a", "b", "c", ""] and is_word.tolist() == [False, True, True, True, False]
    pair = smooth.encode("a b", pair="c")
    names, is_word = tree_leaves(pair)
    assert names == ["", "a", "b", "", "c", ""] and is_word.tolist() == [False, True, True, False, True, False]


def test_a_small_budget_spreads_the_rest_by_size(smooth):
    encoding = smooth.encode("the movie was excellent and the music was long")
    explanation = create("partition_shap", max_evals=6).explain(smooth, encoding, target=1)
    assert not explanation.provenance["details"]["tree_fully_expanded"]
    assert explanation.provenance["details"]["model_calls_counted_as_shap"] <= 7
