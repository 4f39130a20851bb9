"""Load a model and explain one input, through the app's own path (``explainers.plan``: the content cache, the
methods that share a pass computing it once), so a notebook gets the numbers the Heatmaps page shows."""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from corpora import normalize_typed_text
from explainers import REGISTRY, create, parse_spec
from explainers.cache import cache_key
from explainers.choices import MethodChoice
from explainers.explanation import Explanation
from explainers.plan import NeedsTraining, make_plan, run_now
from models import TextClassifier, UserFacingError, cached_classifier
from models.documents import read_input
from workbench.explanations import Explanations

DEFAULT_METHODS = ("saliency", "integrated_gradients", "leave_one_out")


def load_model(spec: str = "default", device: str | None = None) -> TextClassifier:
    """A classifier by built-in name (``default``, ``default-quick``, ``default-nli``; prepared with ``cli.py
    prepare``), a folder holding a Hugging Face model, a hub id (only with ``EXWB_ALLOW_HUB=1``: the library stays
    offline by default) or a prompted causal LM spec (a ``.json`` file, ``models/prompted.py``). One per process."""
    return cached_classifier(spec, device)


def explain(model: TextClassifier | str, text: str, pair: str | None = None,
            methods: Sequence[str] | str = DEFAULT_METHODS, target: int | str | None = None,
            params: dict[str, dict] | None = None, contrast: int | str | None = None,
            document: dict | None = None) -> Explanations:
    """Explain ``text`` (and ``pair``, the second segment of an NLI pair; a document is a long ``text``) with each
    of ``methods`` ("method" or "method:preset", e.g. ``"lime:ferret"``; ``workbench.methods()`` lists them) for
    class ``target`` (an index, a label name, or None for the predicted class).

    ``contrast``: a second class (an index, a label name, or "runner-up"); each method then explains its score of
    ``target`` minus its score of ``contrast`` ("why target rather than contrast", ``explainers/contrast.py``, the
    same path as the app's "Rather than" choice); a method that reads one class its own way refuses it.
    ``document``: how a text is read (``models/documents.py``): a text longer than the model's window is read whole
    in overlapping windows by default (``{"window_size": ..., "window_stride": ..., "window_aggregate": "mean"}``), or
    ``{"long_documents": "truncate"}``; ``{"granularity": "sentence"}`` or ``{"spans": [...]}`` make sentences or
    spans the players.
    ``params``: method id -> parameter overrides, e.g. ``{"integrated_gradients": {"steps": 100}}``. Typed text is
    split as the datasets are (punctuation and n't become words), as on the app's sidebar. A method that cannot run
    (one that needs a masked LM or a trained attribution model not prepared) is left out, and ``.skipped`` says why.
    """
    classifier = load_model(model) if isinstance(model, str) else model
    methods = [methods] if isinstance(methods, str) else list(methods)
    if not methods:
        raise UserFacingError("Name at least one method, e.g. methods=['saliency', 'lime'].")
    text = normalize_typed_text(text)
    pair = normalize_typed_text(pair) if pair is not None else None
    encoding = read_input(classifier, text, pair, document)
    index = _target_index(classifier, target)
    foil = None if contrast is None else contrast if contrast == "runner-up" else _target_index(classifier, contrast)
    results: dict[str, Explanation] = {}
    skipped: dict[str, str] = {}
    if foil is not None:  # a method whose objective reads one class its own way refuses a contrast (base.py)
        for spec in methods:
            if getattr(REGISTRY[parse_spec(spec)[0]], "contrast_support", "output") == "unsupported":
                skipped[spec] = f"{REGISTRY[parse_spec(spec)[0]].label} does not take a contrast class"
        methods_run = [spec for spec in methods if spec not in skipped]
    else:
        methods_run = methods
    for batch in _unique_method_batches(methods_run):  # the planner keys results by method id
        choices = [_choice(spec, params or {}, foil) for spec in batch]
        approved = {cache_key(classifier, encoding, create(c.method_id, preset=c.preset, **c.overrides), index)
                    for c in choices}  # a notebook asked for every method: nothing waits for a click
        plan = make_plan(choices, classifier, encoding, index, approved=approved, budget=math.inf)
        run_now(plan, classifier, encoding, index)
        for spec, choice in zip(batch, choices):
            result = plan.results.get(choice.method_id)
            if isinstance(result, NeedsTraining):
                skipped[spec] = result.message
            elif isinstance(result, Explanation):
                results[spec] = result
            else:  # a message, or nothing computed (pending)
                skipped[spec] = result if isinstance(result, str) else "did not run"
    probabilities = classifier.proba_of(encoding)
    predicted = classifier.labels[int(np.argmax(probabilities))]
    explained = classifier.labels[index] if index is not None else predicted
    context = {"model": classifier.name, "fingerprint": classifier.fingerprint, "text": encoding.text,
               "pair": encoding.pair, "predicted": predicted, "explained": explained,
               "probabilities": {label: float(p) for label, p in zip(classifier.labels, probabilities)}}
    ordered = [results[spec] for spec in methods if spec in results]
    return Explanations(ordered, context, classifier=classifier, encoding=encoding, skipped=skipped)


def _choice(spec: str, params: dict[str, dict], contrast: int | str | None = None) -> MethodChoice:
    method, preset = parse_spec(spec)
    overrides = dict(params.get(method) or {})
    if contrast is not None:  # as the app's heatmaps.with_contrast does
        overrides["contrast"] = contrast
    return MethodChoice(method, preset, overrides)


def _unique_method_batches(specs: list[str]) -> list[list[str]]:
    """Specs in batches where no method id repeats (two presets of one method go to two plans)."""
    batches: list[list[str]] = []
    for spec in dict.fromkeys(specs):
        method = parse_spec(spec)[0]
        for batch in batches:
            if all(parse_spec(s)[0] != method for s in batch):
                batch.append(spec)
                break
        else:
            batches.append([spec])
    return batches


def _target_index(classifier: TextClassifier, target: int | str | None) -> int | None:
    if target is None or target == "predicted":
        return None
    if isinstance(target, str) and not target.isdigit():
        if target not in classifier.labels:
            raise UserFacingError(f"The model has no class '{target}'; its classes are {', '.join(classifier.labels)}.")
        return classifier.labels.index(target)
    index = int(target)
    if not 0 <= index < len(classifier.labels):
        raise UserFacingError(f"Class index {index} is out of range: the model has {len(classifier.labels)} classes "
                              f"({', '.join(classifier.labels)}).")
    return index
