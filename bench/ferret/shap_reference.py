"""Reference values for tests/explainers/methods/test_partition_shap.py from shap itself (run in .venv-ferret):

    .venv-ferret/bin/python bench/ferret/shap_reference.py

Prints shap 0.44's PartitionExplainer values of the test's fixed 6-player game on its fixed tree (full expansion
and a budget of 10 evaluations, batch 5) and shap's text partition tree of the test's leaf names.
"""
import numpy as np
import shap
from shap.maskers._text import partition_tree

NAMES = ["", "it", "'s", "a", "charming", "and", "often", "affecting", "journey", ".", ""]
WEIGHTS = np.array([0.3, -0.7, 1.1, 0.2, -0.4, 0.9])
GAME_TREE = np.array([[0, 1, 0.2, 2], [2, 3, 0.2, 2], [4, 5, 0.2, 2], [6, 7, 0.6, 4], [8, 9, 1.0, 6]], dtype=float)


def game(rows):
    keep = np.asarray(rows, dtype=np.float64)
    return np.tanh(keep @ WEIGHTS) + 0.5 * keep[:, 1] * keep[:, 2] - 0.8 * keep[:, 0] * keep[:, 5]


def main():
    print("shap", shap.__version__)
    masker = shap.maskers.Partition(np.zeros((1, 6)), clustering=GAME_TREE)
    explainer = shap.PartitionExplainer(game, masker)
    for max_evals in (500, 10):
        values = explainer(np.ones((1, 6)), max_evals=max_evals, batch_size=5, silent=True).values[0]
        print(f"max_evals={max_evals}:", repr([float(v) for v in values]))
    tree = partition_tree(NAMES, ["[SEP]"])
    tree[:, 2] = tree[:, 3]
    tree[:, 2] /= tree[:, 2].max()
    print("tree:", repr(tree.tolist()))


if __name__ == "__main__":
    main()
