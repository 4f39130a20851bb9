"""The perturbation methods' forward in the space of word masks, through the one perturbation engine.

Captum's perturbation methods perturb an input tensor; here that tensor is the interpretable representation
itself: a (1, n_words) row of ones, with baseline 0. ``MaskForward`` maps every batch of 0/1 masks to the
target's score of the input with the 0-words removed by ``models.perturb`` (delete, [MASK], [PAD], [UNK], zero
embedding), so every method removes words exactly as leave-one-out and the faithfulness metrics do, and reports
that operator. LIME, KernelSHAP and Shapley sampling build their whole mask matrix at once and ``request`` it in
one call; occlusion calls it as Captum's forward.

Rows are de-duplicated within one explanation (LIME and KernelSHAP draw the same mask many times on short
inputs) and each call goes to the engine as one batch; ``prefetch`` lets a method evaluate every mask a Captum
method will need in one batch before Captum runs (``run_prefetched``: for one that asks one group at a time).
"""
from __future__ import annotations

import numpy as np
import torch

from explainers.contrast import contrast_columns
from explainers.params import param
from explainers.scores import class_score
from models import OPERATORS, Encoding, InputError, Operator, TextClassifier
from models.perturb import perturbed_logits

PERTURBATION_SCORES = ("logit", "probability", "log2-odds")
SCORE_HELP = ("What the perturbed inputs are scored by: the target's logit (paper 003), its probability "
              "(LIME package, paper 002) or its log2-odds (paper 000).")
REMOVAL_OPERATORS = tuple(op.value for op in Operator if op is not Operator.MLM)
OPERATOR_HELP = "How a removed word is removed (the shared perturbation engine in models/perturb.py)."


def operator_param(default: str):
    """The ``operator`` option of the sampling methods' Params (LIME, KernelSHAP, Shapley sampling, occlusion)."""
    return param(default, "Removal operator", OPERATOR_HELP, choices=REMOVAL_OPERATORS)


def score_param(default: str):
    """The ``score`` option of the sampling methods' Params: what the perturbed inputs are scored by."""
    return param(default, "Score", SCORE_HELP, choices=PERTURBATION_SCORES)


def target_scores(logits: np.ndarray, target: int, score: str) -> np.ndarray:
    if score == "logit":
        return contrast_columns(np.asarray(logits, dtype=np.float64))[:, target]  # z_A - z_B with a contrast
    return class_score(logits, target, score)


class MaskForward:
    """f(masks) -> score of the target class; masks (batch, n_words), 1 = keep the word, 0 = remove it."""

    def __init__(self, classifier: TextClassifier, encoding: Encoding, operator: Operator | str, target: int,
                 score: str, filler=None):
        self.classifier = classifier
        self.encoding = encoding
        self.operator = Operator(operator)
        self.filler = filler  # the masked-LM filler of the ``mlm`` operator
        self.target = target
        self.score = score
        self._memo: dict[bytes, float] = {}
        self.requested = 0  # rows Captum asked about
        self.evaluated = 0  # distinct rows sent through the model

    @staticmethod
    def _keys(keep: np.ndarray) -> list[bytes]:
        return [row.tobytes() for row in np.packbits(keep, axis=1)]

    def scores(self, keep: np.ndarray) -> np.ndarray:
        """Scores of the rows of a bool keep-matrix; unseen rows go through the engine in one batch."""
        keep = np.atleast_2d(np.asarray(keep, dtype=bool))
        keys = self._keys(keep)
        todo: dict[bytes, int] = {}
        for row, key in enumerate(keys):
            if key not in self._memo and key not in todo:
                todo[key] = row
        if todo:
            logits = self._logits(keep[list(todo.values())])
            for key, value in zip(todo, target_scores(logits, self.target, self.score)):
                self._memo[key] = float(value)
            self.evaluated += len(todo)
        return np.array([self._memo[key] for key in keys], dtype=np.float64)

    def _logits(self, rows: np.ndarray) -> np.ndarray:
        return perturbed_logits(self.classifier, self.encoding, rows, self.operator, filler=self.filler)

    def request(self, keep: np.ndarray) -> np.ndarray:
        """Scores of the rows a method asks about (counted as requested; repeats are answered from the memo)."""
        keep = np.atleast_2d(np.asarray(keep, dtype=bool))
        self.requested += len(keep)
        return self.scores(keep)

    def __call__(self, masks: torch.Tensor) -> torch.Tensor:
        """The forward Captum calls: masks (batch, n_words) as floats."""
        keep = masks.detach().cpu().reshape(masks.shape[0], -1).numpy() > 0.5
        return torch.as_tensor(self.request(keep), dtype=torch.float64)

    def prefetch(self, keep: np.ndarray) -> None:
        self.scores(keep)

    def remember(self, keep: np.ndarray, logits: np.ndarray) -> None:
        """Answer these rows from logits computed elsewhere (a pass shared with leave-one-out)."""
        for key, value in zip(self._keys(np.atleast_2d(keep)), target_scores(logits, self.target, self.score)):
            if key not in self._memo:
                self._memo[key] = float(value)
                self.evaluated += 1

    def details(self) -> dict:
        return {"score": self.score, "perturbations_requested": self.requested,
                "distinct_perturbations_evaluated": self.evaluated}


class MaskRecorder:
    """A stand-in forward that records the masks Captum asks about (and answers zeros)."""

    def __init__(self):
        self.rows: list[np.ndarray] = []

    def __call__(self, masks: torch.Tensor) -> torch.Tensor:
        self.rows.append(masks.detach().cpu().reshape(masks.shape[0], -1).numpy() > 0.5)
        return torch.zeros(masks.shape[0], dtype=torch.float64)

    def keep_matrix(self) -> np.ndarray:
        return np.concatenate(self.rows) if self.rows else np.zeros((0, 0), dtype=bool)


def run_prefetched(run, forward: MaskForward):
    """``run(f)`` calls Captum with forward ``f`` (deterministically: same seed inside). Captum runs once with a
    recorder to learn every mask it will ask about (no model work), all of them go through the engine in one
    batch, then Captum runs again and is answered from that batch."""
    recorder = MaskRecorder()
    run(recorder)
    forward.prefetch(recorder.keep_matrix())
    return run(forward)


def word_input(encoding: Encoding) -> torch.Tensor:
    """The interpretable input Captum perturbs: every word present."""
    if encoding.n_words == 0:
        raise InputError("The input has no words the model can read, so there is nothing to remove.")
    return torch.ones((1, encoding.n_words), dtype=torch.float64)


def operator_label(operator: Operator | str) -> str:
    return OPERATORS[Operator(operator)].label
