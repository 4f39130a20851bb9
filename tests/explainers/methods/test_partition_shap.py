"""Partition SHAP against shap 0.44.1's own PartitionExplainer and text tree (values recorded below, computed in
.venv-ferret by ``bench/ferret/shap_reference.py``), exact Owen values of simple games, the look-ahead (same
visits and values in fewer model calls), and the explainer on a tiny classifier (efficiency, [CLS]/[SEP] leaves,
the ferret preset's budget)."""
from __future__ import annotations

import heapq

import numpy as np
import pytest
from tolerances import float32_tolerance

from explainers import create
from explainers.mask_forward import MaskForward
from explainers.methods.partition_shap import (
    full_expansion_evals,
    heap_front,
    member_matrix,
    owen_values,
    partition_tree,
    tree_leaves,
)
from explainers.scores import class_score
from models.metering import metered
from models.perturb import perturbed_logits

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

# A 21-leaf game on shap's text tree of LONG_NAMES, where a budget binds over many queue batches
LONG_NAMES = ["", "the", "film", "is", "n't", "bad", ",", "but", "the", "ending", "(", "a", "long", "chase", ")",
              "drags", "on", "and", "on", ".", ""]
LONG_WEIGHTS = np.round(np.sin(np.arange(len(LONG_NAMES)) * 1.7), 3)


def long_game(keep: np.ndarray) -> np.ndarray:
    keep = np.asarray(keep, dtype=np.float64)
    return np.tanh(keep @ LONG_WEIGHTS) + 0.6 * keep[:, 4] * keep[:, 5] - 0.9 * keep[:, 9] * keep[:, 15] \
        + 0.4 * keep[:, 12] * keep[:, 13] * keep[:, 2]


# shap 0.44.1: PartitionExplainer(long_game, shap.maskers.Partition(zeros((1, 21)), clustering=its text tree of
# LONG_NAMES)) on ones((1, 21)), batch_size=5 (bench/ferret/shap_reference.py)
SHAP_LONG = {
    60: [0.01594059632319011, 0.01594059632319011, 0.01594059632319011, 0.01594059632319011, 0.6639942316288001,
         0.8019549486355521, -0.43296316900191384, -0.08292787622912974, -0.08292787622912974, -0.08292787622912974,
         -0.07684236477348963, -0.07684236477348963, -0.07684236477348963, -0.07684236477348963,
         -0.07684236477348963, 0.007673164636113331, 0.007673164636113331, 0.007673164636113331,
         0.00767316463611333, 0.00767316463611333, 0.38921878658106945],
    300: [0.0015323408919346235, 0.5404194032215124, 0.0014097594870223253, -0.4795991183077088, 0.6259894215605233,
          0.8399597587038287, -0.43296316900191384, -0.29273789441262577, 0.24114534841232016, -0.06048225938397645,
          -0.4911500051952004, -0.0074426604938387245, -0.0074426604938387245, -0.0074426604938387245,
          -0.0074426604938387245, 0.10366409415484616, 0.2256062831867181, -0.3216568908061085,
          0.015376168322555438, 0.015376168322555438, 0.38921878658106945],
    800: [0.0, 0.606459482654995, 0.044692286032417976, -0.5873893833946524, 0.6259894215605233, 0.8399597587038287,
          -0.43296316900191384, -0.3349615360277763, 0.4976018751750914, -0.2260501777877473, -0.6270226354518598,
          -0.07954849978017954, 0.6561567340027912, 0.03988639152556005, -0.559057604210717, -0.22035171454153316,
          0.5848253329185654, -0.3568601318415764, -0.4647977180277576, 0.49555005467286845, 0.38921878658106945],
}  # 60 and 300: the budget binds (a full expansion asks for 758 masks); 800: the whole tree


class Counted:
    """A set function that counts its calls (each would be one model call)."""

    def __init__(self, f):
        self.f, self.calls = f, 0

    def __call__(self, keep):
        self.calls += 1
        return self.f(keep)


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


@pytest.mark.parametrize("max_evals", sorted(SHAP_LONG))
def test_look_ahead_matches_shap_in_fewer_calls(max_evals):
    tree, m = partition_tree(LONG_NAMES), len(LONG_NAMES)
    runs = {}
    for ahead_rows in (0, 64):
        game_calls = Counted(long_game)
        values, evals = owen_values(game_calls, tree, m, max_evals, queue_batch=5, seed=0, ahead_rows=ahead_rows)
        np.testing.assert_allclose(values, SHAP_LONG[max_evals], rtol=0, atol=1e-12)
        runs[ahead_rows] = (evals, game_calls.calls)
    assert runs[0][0] == runs[64][0] == min(max_evals, full_expansion_evals(tree, m) + 2)
    if max_evals < full_expansion_evals(tree, m):  # the budget binds: the look-ahead saves calls
        assert runs[64][1] < runs[0][1] / 2
    else:  # the whole tree: every mask in one call
        assert runs[0][1] == runs[64][1] == 1


@pytest.mark.parametrize("max_evals", [20, 60, 150, 300, 600])
def test_look_ahead_never_changes_the_visits(max_evals):
    """Every expansion, in order (node and context), is the same with no look-ahead, the default and a look-ahead
    larger than the tree; so is the budget count, and the values up to float64 rounding (numpy's matmul in the
    game adds in another order when a mask sits in a larger batch)."""
    tree, m = partition_tree(LONG_NAMES), len(LONG_NAMES)
    runs = []
    for ahead_rows in (0, 64, 10_000):
        visits = []
        values, evals = owen_values(long_game, tree, m, max_evals, 5, 0, ahead_rows=ahead_rows, visits=visits)
        runs.append((visits, values, evals))
    assert len(runs[0][0]) == (runs[0][2] - 2) // 2
    for visits, values, evals in runs[1:]:
        assert visits == runs[0][0] and evals == runs[0][2]
        np.testing.assert_allclose(values, runs[0][1], rtol=0, atol=1e-12)


def test_look_ahead_on_a_model_keeps_values_in_fewer_batches(smooth):
    """A 26-word input at the ferret preset (the budget binds): the same budget count, values equal within float32
    (the rows come from other batches), fewer model batches, and the rows computed ahead and never read are few."""
    text = " ".join(["the movie was excellent and the music was long but"] * 2 + ["the acting was not good at all"])
    encoding = smooth.encode(text)
    names, is_word = tree_leaves(encoding)
    tree = partition_tree(names)
    assert full_expansion_evals(tree, len(names)) > 498
    runs = {}
    for ahead_rows in (0, 64):
        forward = MaskForward(smooth, encoding, "mask", 1, "probability")
        with metered() as meter:
            values, evals = owen_values(lambda keep: forward.scores(keep[:, is_word]), tree, len(names), 500, 5, 0,
                                        ahead_rows=ahead_rows)
        runs[ahead_rows] = (values, evals, meter.batches, meter.forward_passes)
    (values, evals, batches, rows), (ahead_values, ahead_evals, ahead_batches, ahead_rows_run) = runs[0], runs[64]
    assert ahead_evals == evals == 500
    np.testing.assert_allclose(ahead_values, values, rtol=0, atol=float32_tolerance(1.0))
    assert ahead_batches < batches / 2
    assert rows <= ahead_rows_run <= 1.1 * rows


def test_the_whole_tree_is_one_batch(smooth):
    encoding = smooth.encode("the movie was excellent and the music was long")
    with metered() as meter:
        explanation = create("partition_shap", preset="ferret").explain(smooth, encoding, target=1)
    assert explanation.provenance["details"]["tree_fully_expanded"]
    assert meter.batches == 1


def test_the_input_row_is_not_run_again(smooth):
    """f11 keeps every word: it is the input, whose logits the classifier already holds."""
    encoding = smooth.encode("the movie was excellent and the music was long")
    smooth.logits_of(encoding)
    with metered() as meter:
        explanation = create("partition_shap", preset="ferret").explain(smooth, encoding, target=1)
    assert meter.forward_passes == explanation.provenance["details"]["distinct_perturbations_evaluated"] - 1


def testheap_front_is_the_queues_order():
    rng = np.random.default_rng(0)
    queue = []
    for value in rng.normal(size=500):
        heapq.heappush(queue, (float(value), len(queue)))
    for k in (0, 1, 7, 64, 500, 600):
        assert heap_front(queue, k) == heapq.nsmallest(k, queue)
