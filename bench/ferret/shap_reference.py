"""Reference values for tests/explainers/methods/test_partition_shap.py from shap itself (run in .venv-ferret):

    .venv-ferret/bin/python bench/ferret/shap_reference.py

Prints shap 0.44's PartitionExplainer values of the test's fixed 6-player game on its fixed tree (full expansion
and a budget of 10 evaluations, batch 5), shap's text partition tree of the test's leaf names, and the values of
the test's 21-player game on shap's text tree of LONG_NAMES (budgets 60 and 300, which bind, and 800, the whole
tree; batch 5).
"""
import numpy as np
import shap
from shap.maskers._text import partition_tree

NAMES = ["", "it", "'s", "a", "charming", "and", "often", "affecting", "journey", ".", ""]
WEIGHTS = np.array([0.3, -0.7, 1.1, 0.2, -0.4, 0.9])
GAME_TREE = np.array([[0, 1, 0.2, 2], [2, 3, 0.2, 2], [4, 5, 0.2, 2], [6, 7, 0.6, 4], [8, 9, 1.0, 6]], dtype=float)
LONG_NAMES = ["", "the", "film", "is", "n't", "bad", ",", "but", "the", "ending", "(", "a", "long", "chase", ")",
              "drags", "on", "and", "on", ".", ""]
LONG_WEIGHTS = np.round(np.sin(np.arange(len(LONG_NAMES)) * 1.7), 3)


def game(rows):
    keep = np.asarray(rows, dtype=np.float64)
    return np.tanh(keep @ WEIGHTS) + 0.5 * keep[:, 1] * keep[:, 2] - 0.8 * keep[:, 0] * keep[:, 5]


def long_game(rows):
    keep = np.asarray(rows, dtype=np.float64)
    return np.tanh(keep @ LONG_WEIGHTS) + 0.6 * keep[:, 4] * keep[:, 5] - 0.9 * keep[:, 9] * keep[:, 15] \
        + 0.4 * keep[:, 12] * keep[:, 13] * keep[:, 2]


def text_tree(names):
    tree = partition_tree(names, ["[SEP]"])
    tree[:, 2] = tree[:, 3]
    tree[:, 2] /= tree[:, 2].max()
    return tree


def main():
    print("shap", shap.__version__)
    masker = shap.maskers.Partition(np.zeros((1, 6)), clustering=GAME_TREE)
    explainer = shap.PartitionExplainer(game, masker)
    for max_evals in (500, 10):
        values = explainer(np.ones((1, 6)), max_evals=max_evals, batch_size=5, silent=True).values[0]
        print(f"max_evals={max_evals}:", repr([float(v) for v in values]))
    print("tree:", repr(text_tree(NAMES).tolist()))
    n = len(LONG_NAMES)
    explainer = shap.PartitionExplainer(long_game, shap.maskers.Partition(np.zeros((1, n)),
                                                                          clustering=text_tree(LONG_NAMES)))
    for max_evals in (60, 300, 800):
        values = explainer(np.ones((1, n)), max_evals=max_evals, batch_size=5, silent=True).values[0]
        print(f"long game, max_evals={max_evals}:", repr([float(v) for v in values]))


if __name__ == "__main__":
    main()
