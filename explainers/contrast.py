"""Contrastive targets: "why class A rather than class B?" (inseq's contrastive attribution; Yin & Neubig 2022).

With a contrast (foil) class B the explained output is the difference of the method's own score of the two
classes, s(A) - s(B), where s is whatever the method scores: the logit (``output="logit"``: z_A - z_B, the
*logit difference*), the probability (``"probability"``: p_A - p_B, the *probability difference*), the
log-probability (= the logit difference), or the log2-odds of the perturbation methods. So both contrasts the
peers offer are one option away (the method's own ``output`` / ``score``), and for a method linear in its output
(signed saliency, Input x Gradient, IG, LOO, occlusion, LIME's least squares) the contrastive explanation equals
the explanation of A minus the explanation of B; for a non-linear one (a gradient's norm, |IG|) it is the
explanation of the difference, not the difference of the explanations.

How it reaches the methods without changing their signature: ``Explainer.explain`` resolves the contrast class
and runs ``attribute`` inside ``contrasting(foil)``; the two places every method's score goes through read it:
``contrast_columns`` in the embedding forward (gradient methods: Captum differentiates column A of s(z) - s(z)_B)
and in ``scores.class_score`` / ``mask_forward.target_scores`` (perturbation methods). A method whose objective
reads the class some other way declares ``contrast_support = "unsupported"`` and refuses a contrast with a
message; one that reads no class (attention, rollout, value zeroing, ALTI, random) declares ``"no-class"``.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

RUNNER_UP = "runner-up"
NONE = "none"
HELP = ("a contrast class: explain 'why the target rather than this class' (the difference of the two classes' "
        "scores); a class index or 'runner-up' (the most likely class other than the target); 'none' for none")

Choice = int | str | None  # a class index, "runner-up", or None

_FOIL: ContextVar[int | None] = ContextVar("contrast_foil", default=None)


def parse(choice) -> Choice:
    """None / "none" / "" -> None, "runner-up", or a class index (ValueError with the fix otherwise)."""
    if choice is None:
        return None
    if isinstance(choice, (int, np.integer)) and not isinstance(choice, bool) and choice >= 0:
        return int(choice)
    if isinstance(choice, str):
        text = choice.strip().lower()
        if text in ("", NONE):
            return None
        if text in (RUNNER_UP, "runner_up", "second"):
            return RUNNER_UP
        if text.isdigit():
            return int(text)
    raise ValueError(f"contrast must be a class index (0, 1, ...), 'runner-up' or 'none'; got {choice!r}")


def resolve(choice, logits, target: int) -> int | None:
    """The contrast class index for an input with these logits and this target class, or None."""
    choice = parse(choice)
    if choice is None:
        return None
    logits = np.asarray(logits, dtype=np.float64).reshape(-1)
    if logits.size < 2:
        raise ValueError("A contrast needs a model with at least two classes.")
    if choice == RUNNER_UP:
        others = logits.copy()
        others[target] = -np.inf
        return int(np.argmax(others))
    if not 0 <= choice < logits.size:
        raise ValueError(f"Contrast class {choice} does not exist; the model has classes 0..{logits.size - 1}.")
    if choice == target:
        raise ValueError(f"The contrast class {choice} is the target class itself; choose another class (or "
                         f"'runner-up').")
    return choice


def label(choice, labels=None) -> str:
    choice = parse(choice)
    if choice is None:
        return "no contrast"
    if choice == RUNNER_UP:
        return "the runner-up class"
    return f"class {choice}" + (f" ({labels[choice]})" if labels is not None and choice < len(labels) else "")


@contextmanager
def contrasting(foil: int | None):
    """Scores read inside are s(target) - s(foil) (``contrast_columns``); ``None`` reads plain scores."""
    token = _FOIL.set(foil)
    try:
        yield
    finally:
        _FOIL.reset(token)


def current_foil() -> int | None:
    return _FOIL.get()


def contrast_columns(scores, foil: int | None = None):
    """Scores of every class (rows x classes, numpy or torch) minus the foil's column: column A is then
    s(A) - s(B). Without a foil (none given, none set by ``contrasting``) the scores come back unchanged."""
    foil = current_foil() if foil is None else foil
    if foil is None:
        return scores
    return scores - scores[..., foil:foil + 1]


def explained_output(foil: int | None, labels, target: int) -> str:
    """The explained quantity in words, for provenance and captions."""
    if foil is None:
        return f"the score of {labels[target]}"
    return (f"s({labels[target]}) - s({labels[foil]}): the method's score (its output / score option: logit, "
            f"probability, ...) of the target minus that of the contrast class")
