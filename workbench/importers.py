"""Explanations computed by other tools, as ``Explanations`` the workbench can score (faithfulness with its random
band, plausibility, agreement): ferret's explanation lists and inseq's ``FeatureAttributionOutput``.

Both give scores per sub-word token of the model's own tokenizer. The tokens are matched with the workbench's
encoding of the same text (by id where the tool keeps ids, else by token string; special tokens may be present or
not) and summed into words, the workbench's default aggregation (``explainers.aggregate``), so the metrics remove
the same words as for the workbench's own methods. Nothing here imports ferret or inseq: the objects are read by
their documented attributes (ferret ``Explanation``: ``text, tokens, scores, explainer, target / target_pos_idx``;
inseq ``FeatureAttributionOutput.sequence_attributions[i]``: ``source``, ``target`` (lists of ``TokenWithId``),
``source_attributions`` / ``target_attributions`` of shape (tokens, generation steps[, hidden size]),
``attr_pos_start``).
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from corpora import normalize_typed_text
from explainers import Explanation, aggregate_to_words
from models import TextClassifier, UserFacingError
from workbench.explaining import load_model
from workbench.explanations import Explanations


def from_token_scores(model: TextClassifier | str, text: str, tokens: Sequence[str],
                      scores: Sequence[float] | np.ndarray, method: str, target: int | None = None, pair: str | None = None,
                      token_ids: Sequence[int] | None = None, signed: bool = True, source: str = "imported",
                      aggregation: str = "sum") -> Explanation:
    """One explanation from per-token scores of the model's tokenizer (with or without its special tokens)."""
    classifier = load_model(model) if isinstance(model, str) else model
    text = normalize_typed_text(text)
    encoding = classifier.encode(text, normalize_typed_text(pair) if pair is not None else None)
    values = np.asarray(scores, dtype=np.float64).reshape(-1)
    if len(tokens) != values.size:
        raise UserFacingError(f"{method}: {len(tokens)} tokens but {values.size} scores; give one score per token.")
    token_scores = _placed(encoding, list(tokens), None if token_ids is None else [int(i) for i in token_ids],
                           values, method)
    word_scores = aggregate_to_words(token_scores, encoding.token_word, encoding.n_words, aggregation)
    probabilities = classifier.proba_of(encoding)
    index = int(np.argmax(probabilities)) if target is None else int(target)
    if not 0 <= index < len(classifier.labels):
        raise UserFacingError(f"{method}: class {index} does not exist; the model has {len(classifier.labels)}.")
    provenance = {
        "method": method, "method_label": method, "family": "imported", "reference": source, "preset": None,
        "params": {}, "target": {"index": index, "label": classifier.labels[index],
                                 "how": "predicted" if target is None else "chosen"},
        "baseline": f"as computed by {source}", "removal_operator": None, "sign": "as computed by " + source,
        "aggregation": f"{aggregation} over sub-word tokens", "normalization": "none (raw scores)", "seed": None,
        "seconds": 0.0, "forward_passes": 0, "backward_passes": 0, "imported_from": source,
        "model": {"name": classifier.name, "fingerprint": classifier.fingerprint},
        "input": {"key": encoding.key, "tokens": encoding.n_tokens, "words": encoding.n_words},
        "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
    }
    return Explanation(method_id=method, method_label=f"{method} ({source})", family="imported", signed=signed,
                       tokens=encoding.tokens, token_word=encoding.token_word, words=encoding.words,
                       word_segment=encoding.word_segment, word_scores=word_scores, token_scores=token_scores,
                       target=index, target_label=classifier.labels[index], provenance=provenance)


def _placed(encoding, tokens: list[str], ids: list[int] | None, scores: np.ndarray, method: str) -> np.ndarray:
    """The scores on the encoding's tokens (0 on special tokens the tool left out)."""
    ours_ids = [int(i) for i in encoding.input_ids]
    ours = list(encoding.tokens)
    content = [i for i, w in enumerate(encoding.token_word) if w >= 0]
    if (ids if ids is not None else tokens) == (ours_ids if ids is not None else ours):
        return scores.copy()
    if (ids if ids is not None else tokens) == [(ours_ids if ids is not None else ours)[i] for i in content]:
        placed = np.zeros(len(ours))
        placed[content] = scores
        return placed
    raise UserFacingError(f"{method}: the tokens do not match the model's tokens for this text (the tool gave "
                          f"{len(tokens)}, the model reads {len(ours)}); explain with the same model and "
                          f"tokenizer, and pass the same text.")


def from_ferret(explanations: Sequence[Any], model: TextClassifier | str, pair: str | None = None) -> Explanations:
    """ferret's ``Benchmark.explain`` result (a list of ``Explanation``: text, tokens, scores, explainer, target or
    target_pos_idx), all of one text; one workbench explanation per ferret explainer."""
    explanations = list(explanations)
    if not explanations:
        raise UserFacingError("The ferret list is empty: pass bench.explain(text, target=...)'s result.")
    texts = {_field(e, "text") for e in explanations}
    if len(texts) != 1:
        raise UserFacingError("The ferret explanations are of several texts: import one text's list at a time.")
    out = []
    for e in explanations:
        target = _field(e, "target_pos_idx", None)
        target = _field(e, "target", None) if target is None else target
        out.append(from_token_scores(model, _field(e, "text"), list(_field(e, "tokens")), _field(e, "scores"),
                                     method=f"ferret-{str(_field(e, 'explainer')).split()[0].lower()}",
                                     target=None if target is None else int(target), pair=pair,
                                     source="ferret"))
    return _wrap(out, model, texts.pop(), pair)


def from_inseq(output: Any, model: TextClassifier | str, text: str | None = None, target: int | None = None,
               sequence: int = 0, step: int = -1, method: str | None = None) -> Explanations:
    """inseq's ``FeatureAttributionOutput`` (``model.attribute(...)``): the attributions of sequence ``sequence``
    at generation step ``step`` (the last by default), summed over the hidden size when granular. Encoder-decoder
    outputs give the source tokens' scores, decoder-only ones the prefix's (``target_attributions``). ``text``:
    the text the classifier reads (default: inseq's ``info["input_texts"]``)."""
    sequences = getattr(output, "sequence_attributions", None)
    if not sequences:
        raise UserFacingError("Not an inseq FeatureAttributionOutput: it has no sequence_attributions.")
    attribution = sequences[sequence]
    info = getattr(output, "info", None) or {}
    text = text if text is not None else (info.get("input_texts") or [None])[sequence]
    if text is None:
        raise UserFacingError("Pass text=...: the inseq output does not say which text it explains.")
    if getattr(attribution, "source_attributions", None) is not None:
        matrix, tokens = attribution.source_attributions, attribution.source
    elif getattr(attribution, "target_attributions", None) is not None:
        matrix, tokens = attribution.target_attributions, attribution.target
    else:
        raise UserFacingError("The inseq output holds no attributions (neither source nor target).")
    values = np.asarray(matrix.detach().cpu().numpy() if hasattr(matrix, "detach") else matrix, dtype=np.float64)
    if values.ndim == 3:  # granular (e.g. gradients per hidden unit): inseq's own default sums them
        values = values.sum(axis=-1)
    column = values[:, step]
    kept = np.isfinite(column)  # a decoder's prefix grows by one token per step: later rows are NaN
    tokens = [t for t, keep in zip(tokens[:column.size], kept) if keep]
    name = method or info.get("attribution_method") or "attribution"
    explanation = from_token_scores(model, text, [getattr(t, "token", t) for t in tokens], column[kept],
                                    method=f"inseq-{name}", target=target,
                                    token_ids=[t.id for t in tokens] if all(hasattr(t, "id") for t in tokens)
                                    else None, source="inseq")
    return _wrap([explanation], model, text, None)


def _field(item: Any, name: str, *default):
    if isinstance(item, dict):
        return item.get(name, *default) if default else item[name]
    return getattr(item, name, *default)


def _wrap(explanations: list[Explanation], model, text: str, pair: str | None) -> Explanations:
    classifier = load_model(model) if isinstance(model, str) else model
    encoding = classifier.encode(normalize_typed_text(text), normalize_typed_text(pair) if pair else None)
    probabilities = classifier.proba_of(encoding)
    predicted = classifier.labels[int(np.argmax(probabilities))]
    context = {"model": classifier.name, "fingerprint": classifier.fingerprint, "text": encoding.text,
               "pair": encoding.pair, "predicted": predicted, "explained": explanations[0].target_label,
               "probabilities": {label: float(p) for label, p in zip(classifier.labels, probabilities)}}
    return Explanations(explanations, context, classifier=classifier, encoding=encoding)
