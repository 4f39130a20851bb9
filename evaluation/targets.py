"""The one target policy: which class an explanation explains and a metric reads.

Every run, metric, page and command names its target with a *choice* and turns it into a class index here,
so an explanation and the score that judges it always refer to the same class.

| choice                  | the class                                        | when the input has no gold label              |
|-------------------------|--------------------------------------------------|-----------------------------------------------|
| ``"predicted"`` (None)  | the model's arg-max on the unperturbed input     | not needed                                    |
| ``"gold"``              | the example's gold label                         | the predicted class; ``how`` says so          |
| a class index ``k``     | class ``k`` (``"k"`` as text is read as ``k``)   | not needed; ``k`` outside the model's classes |
|                         |                                                  | is an error                                   |

The fallback is deliberate: a dataset without labels (a user's file, typed text) can still be run with
"gold" and gets the predicted class, which ``how`` reports per input. The one exception is a metric whose paper
reads the gold label (paper 002's): ``evaluation/suite/paper_targets.py`` refuses such a run rather than report the
predicted class under the paper's name.
"""
from __future__ import annotations

from argparse import ArgumentTypeError

import numpy as np

from explainers import contrast as contrast_policy

PREDICTED = "predicted"
GOLD = "gold"
NAMES = (PREDICTED, GOLD)
NO_GOLD = "predicted (no gold label)"
HELP = "the class explained and measured: 'predicted', 'gold' (the predicted class where there is no label) or a " \
       "class index"

Choice = str | int  # "predicted", "gold" or a class index


def parse(choice) -> Choice:
    """``choice`` as the policy names it: "predicted", "gold" or a class index (ValueError otherwise)."""
    if choice is None:
        return PREDICTED
    if isinstance(choice, (int, np.integer)) and not isinstance(choice, bool) and choice >= 0:
        return int(choice)
    if isinstance(choice, str):
        text = choice.strip().lower()
        if text in NAMES:
            return text
        if text.isdigit():
            return int(text)
    raise ValueError(f"target must be 'predicted', 'gold' or a class index (0, 1, ...); got {choice!r}")


def explain_target(choice, gold: int | None) -> int | None:
    """The ``target`` argument of ``Explainer.explain``: a class index, or None for the predicted class (the
    explainer then reads the prediction itself, and its provenance and cache key say "predicted")."""
    choice = parse(choice)
    if choice == PREDICTED:
        return None
    if choice == GOLD:
        return None if gold is None else int(gold)
    return choice


def resolve(choice, logits, gold: int | None) -> int:
    """The class index of ``choice`` for an input with these unperturbed ``logits`` (one row) and gold label."""
    logits = np.asarray(logits).reshape(-1)
    index = explain_target(choice, gold)
    if index is None:
        return int(np.argmax(logits))
    if not 0 <= index < logits.size:
        raise ValueError(f"Target class {index} does not exist; the model has classes 0..{logits.size - 1}.")
    return index


def how(choice, gold: int | None) -> str:
    """How the class was chosen, for provenance: "predicted", "gold", "chosen" or "predicted (no gold label)"."""
    choice = parse(choice)
    if choice == GOLD:
        return GOLD if gold is not None else NO_GOLD
    return PREDICTED if choice == PREDICTED else "chosen"


def label(choice, labels=None) -> str:
    """A choice in words, for controls and captions: "predicted class", "gold label", "class 1 (positive)"."""
    choice = parse(choice)
    if choice == PREDICTED:
        return "predicted class"
    if choice == GOLD:
        return "gold label"
    return f"class {choice}" + (f" ({labels[choice]})" if labels is not None and choice < len(labels) else "")


def cli_choice(value: str) -> Choice:
    """``parse`` for argparse (``type=``): a bad value gets the policy's one-line message."""
    try:
        return parse(value)
    except ValueError as error:
        raise ArgumentTypeError(str(error)) from None


# ----- the contrast class ("why the target rather than B?") ---------------------------------------------
# The rule lives in ``explainers/contrast.py`` (explainers may not import evaluation); the metrics read it from here.
CONTRAST_HELP = contrast_policy.HELP


def parse_contrast(choice):
    """None, "runner-up" or a class index (ValueError with the fix otherwise)."""
    return contrast_policy.parse(choice)


def resolve_contrast(choice, logits, target: int) -> int | None:
    """The contrast class of an input with these unperturbed logits and this target class, or None."""
    return contrast_policy.resolve(choice, logits, target)


def cli_contrast(value: str):
    """``parse_contrast`` for argparse (``type=``)."""
    try:
        return parse_contrast(value)
    except ValueError as error:
        raise ArgumentTypeError(str(error)) from None
