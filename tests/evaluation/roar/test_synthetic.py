"""Paper 001's synthetic redundant-feature problem (section 3.3, Fig. 3): Recursive ROAR recovers the true
importance ordering (the 4 informative features first) where plain ROAR, with importance from the original
linear model, does not."""
from __future__ import annotations

import numpy as np
import pytest

from evaluation.roar.synthetic import SyntheticProblem, compare, run

INFORMATIVE = {0, 1, 2, 3}


@pytest.fixture(scope="module")
def curves():
    return compare(SyntheticProblem(seed=2))


def test_the_problem_is_the_papers_equation_1():
    x_train, y_train, _, _, a = SyntheticProblem(seed=2, n_train=20000).draw()
    assert np.flatnonzero(a).tolist() == [0, 1, 2, 3]  # exactly 4 informative features
    assert 0.45 < y_train.mean() < 0.55  # y = [z > 0]
    # x = a z / 10 + d eta + eps / 10: the informative features correlate with y, the others do not
    correlation = [abs(np.corrcoef(x_train[:, j], y_train)[0, 1]) for j in range(16)]
    assert min(correlation[j] for j in range(4) if abs(a[j]) > 0.3) > 3 * max(correlation[4:])


def test_recursive_roar_removes_the_informative_features_first_and_plain_roar_does_not(curves):
    assert set(curves["recursive"]["order"][:4]) == INFORMATIVE
    assert set(curves["ground-truth"]["order"][:4]) == INFORMATIVE
    assert set(curves["roar"]["order"][:4]) != INFORMATIVE  # the original model's weights mislead ROAR
    assert sorted(curves["roar"]["order"]) == list(range(16))  # every feature removed exactly once


def test_recursive_curve_equals_the_ground_truth_and_roar_is_worse(curves):
    truth, recursive, roar = (np.array(curves[s]["accuracy"]) for s in ("ground-truth", "recursive", "roar"))
    assert recursive[4] == truth[4]  # the same 4 features removed -> the same retrained model
    assert truth[4] < 0.56  # near chance once the informative features are gone
    assert roar[4] > truth[4] + 0.05  # ROAR still leaves an informative feature in
    assert np.mean(roar[1:6]) > np.mean(recursive[1:6])  # ROAR's curve lies above (= looks less faithful)
    assert curves["worst-case"]["accuracy"][4] > 0.6  # removing uninformative features first keeps accuracy up


@pytest.mark.parametrize("seed", [0, 1, 3, 4, 5, 6])
def test_recursive_roar_reaches_the_ground_truth_after_four_steps_on_other_draws(seed):
    problem = SyntheticProblem(seed=seed, n_train=3000, n_test=1500)
    recursive, truth = run(problem, "recursive"), run(problem, "ground-truth")
    assert set(recursive["order"][:4]) == INFORMATIVE
    assert recursive["accuracy"][4] == truth["accuracy"][4]
