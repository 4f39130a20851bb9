"""Methods that train something per model (AML's attribution model G) under model randomization.

An AML explains only the model its G was trained on, and a randomized copy is another model (its own fingerprint).
Silently using the original's G as if it were trained for the copy would be wrong; the rule here:

- pAML (no fine-tuning): every stage is explained with **the original model's G**, and the explanation and the page
  say so (G reads the copy's prediction, but its weights were trained against the original);
- fAML (``finetune_steps`` > 0): the original model's G **fine-tuned on each copy** for those steps, against the
  copy's own outputs; the page says that too.

Randomization then tests what it should: whether the map follows the randomized classifier, and a pAML map that
stays the same exposes that G carries what it learned from the original.
"""
from __future__ import annotations

import dataclasses

from explainers import Explainer, create
from models import TextClassifier


def randomization_note(explainer: Explainer, original: TextClassifier) -> str | None:
    """What a method that trains per model does on the randomized copies (one line for the page), or None."""
    if not explainer.trains or not hasattr(explainer.params, "source_fingerprint"):
        return None
    if getattr(explainer.params, "checkpoint", ""):
        return (f"{explainer.label}: every randomized copy is explained with the checkpoint you named "
                f"({explainer.params.checkpoint}), which is refused unless it was trained for that exact model.")
    steps = getattr(explainer.params, "finetune_steps", 0)
    if steps:
        return (f"{explainer.label} on the randomized copies: the original model's G ({original.fingerprint}), "
                f"fine-tuned with fAML for {steps} steps on each copy's own outputs.")
    return (f"{explainer.label} on the randomized copies: labelled as the original model's G ({original.fingerprint}), "
            f"not retrained for the copy; choose the fAML preset to fine-tune it on each copy.")


def for_randomized_copies(explainers: dict[str, Explainer],
                          original: TextClassifier) -> tuple[dict[str, Explainer], dict[str, str]]:
    """The explainers to run on the original and its randomized copies (AML pointed at the original's G), and a
    note per such method."""
    out, notes = {}, {}
    for name, explainer in explainers.items():
        note = randomization_note(explainer, original)
        if note is None:
            out[name] = explainer
            continue
        notes[name] = note
        if getattr(explainer.params, "checkpoint", ""):
            out[name] = explainer
            continue
        params = {**dataclasses.asdict(explainer.params), "source_fingerprint": original.fingerprint}
        out[name] = create(explainer.id, preset=explainer.preset, **params)
    return out, notes
