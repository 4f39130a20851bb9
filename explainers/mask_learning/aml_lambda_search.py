"""Paper 004's lambda search (App. A.2): Optuna TPE (seed 42) over integers 1-100 for (lambda_p, lambda_a,
lambda_inv), 40 trials in the paper, each trial one epoch of training on 400 inputs, scored on the validation
metric G is selected on. ``tpe_search`` is the search; what one trial trains is the caller's: G on the
classifier's own backbone (``aml_training.search_lambdas``) or on another encoder (``search_cross_lambdas``).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from explainers.mask_learning.cross_backbone import CrossBackboneAML
from explainers.mask_learning.selection import SelectionMetric, metric_of_inputs
from models import TextClassifier, UserFacingError
from models.encoding import Encoding

SEARCH_INPUTS = 400  # training inputs of one trial (paper 004 App. A.2)
LAMBDA_RANGE = (1, 100)
LAMBDA_NAMES = ("lambda_p", "lambda_a", "lambda_inv")

TrialScore = Callable[[dict[str, float]], float]  # {lambda_p, lambda_a, lambda_inv} -> validation score


def tpe_search(score: TrialScore, metric: SelectionMetric, trials: int, log: Callable[[str], None] = print) -> dict:
    """Optuna TPE over the three lambdas; the best lambdas, every trial's, and the best value."""
    try:
        import optuna  # deferred: a heavy import only this search needs (requirements.txt pins it)
    except ImportError:
        raise UserFacingError("The lambda search (--search-trials) needs Optuna, which requirements.txt pins but this "
                              "Python environment lacks: run `make run` again or `pip install -r requirements.txt` "
                              "(or `pip install optuna`). Without --search-trials, prepare-aml uses the fixed "
                              "lambdas (--lambdas P,A,INV sets them).") from None

    def objective(trial) -> float:
        lambdas = {name: float(trial.suggest_int(name, *LAMBDA_RANGE)) for name in LAMBDA_NAMES}
        value = score(lambdas)
        log(f"trial {trial.number}: lambdas {tuple(lambdas.values())} -> {metric.name} {value:.4f}")
        return value

    optuna.logging.set_verbosity(optuna.logging.WARNING)  # each trial is logged once, by ``log`` above
    study = optuna.create_study(direction="maximize" if metric.higher_is_better else "minimize",
                                sampler=optuna.samplers.TPESampler(seed=42))
    study.optimize(objective, n_trials=trials)
    history = [{"trial": t.number, **t.params, "value": t.value} for t in study.trials]
    return {"trials": len(study.trials), "best_value": study.best_value, "best": study.best_params,
            "history": history}


def cross_trial_score(classifier: TextClassifier, source: TextClassifier, train: list[Encoding],
                      validation: list[Encoding], metric: SelectionMetric, lambdas: dict[str, float],
                      lr: float, dropout: float = 0.1, seed: int = 0, mask_token: str = "mask") -> float:
    """One trial with G on ``source``'s encoder: a fresh G, one epoch on ``train``, the mean metric of its maps of
    ``validation`` (what ``prepare_cross_aml`` selects on after its first epoch)."""
    aml = CrossBackboneAML(classifier, source, dropout=dropout, seed=seed, mask_token=mask_token)
    weights = (lambdas["lambda_p"], lambdas["lambda_a"], lambdas["lambda_inv"])
    aml.train(train, weights, epochs=1, lr=lr, seed=seed)
    maps = [aml.word_scores(e).cpu().double().numpy() for e in validation]
    return float(np.mean(metric_of_inputs(classifier, validation, maps, metric)))


def search_cross_lambdas(classifier: TextClassifier, source: TextClassifier, train: list[Encoding],
                         validation: list[Encoding], metric: SelectionMetric, trials: int, lr: float,
                         dropout: float = 0.1, seed: int = 0, mask_token: str = "mask",
                         log: Callable[[str], None] = print) -> dict:
    """The paper's search for a G on another backbone: each trial one epoch on the first 400 training inputs."""
    return tpe_search(lambda lambdas: cross_trial_score(classifier, source, train[:SEARCH_INPUTS], validation,
                                                        metric, lambdas, lr, dropout, seed, mask_token),
                      metric, trials, log)
